// Writes schema/profile.schema.json from the zod profile schema, so editors validate profiles/*.yaml as they are
// typed (`# yaml-language-server: $schema=../schema/profile.schema.json`). A test checks the committed file is current.
// Run: node bin/tsx-run.js scripts/write-profile-schema.ts
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { profileSchema } from '../src/profiles/schema.ts';

export const SCHEMA_PATH = fileURLToPath(new URL('../schema/profile.schema.json', import.meta.url));

export function profileJsonSchema(): Record<string, unknown> {
  // draft-07: the newest draft yaml-language-server and most editors fully support.
  const schema = z.toJSONSchema(profileSchema, { target: 'draft-7' }) as Record<string, unknown>;
  return { ...schema, title: 'SGLang launch profile' };
}

export function profileJsonSchemaText(): string {
  return `${JSON.stringify(profileJsonSchema(), null, 2)}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(SCHEMA_PATH, profileJsonSchemaText());
  console.log(`wrote ${SCHEMA_PATH}`);
}
