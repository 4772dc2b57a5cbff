#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npx glm` works from a plain `npm ci` with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
