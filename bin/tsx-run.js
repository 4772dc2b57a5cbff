#!/usr/bin/env node
// Runs one TypeScript entry file (bench, scripts) through tsx.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { register } from 'tsx/esm/api';

register();
const file = process.argv[2];
if (!file) {
  console.error('usage: tsx-run FILE.ts [args]');
  process.exit(2);
}
process.argv.splice(1, 1);
await import(pathToFileURL(resolve(file)).href);
