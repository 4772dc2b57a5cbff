// Writes the JSON Schemas editors use, from the zod schemas: schema/config.schema.json and
// schema/profile.schema.json. Tests check the committed files are current. Run: npm run schema
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ConfigSchema } from '../src/config/schema.ts';
import { SCHEMA_PATH as PROFILE_SCHEMA_PATH, profileJsonSchemaText } from './write-profile-schema.ts';

export const CONFIG_SCHEMA_PATH = fileURLToPath(new URL('../schema/config.schema.json', import.meta.url));

export function configJsonSchemaText(): string {
  // io: 'input' so fields with defaults are optional, as they are in the file.
  const schema = z.toJSONSchema(ConfigSchema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  return `${JSON.stringify({ ...schema, title: 'glm-ops bot config' }, null, 2)}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(CONFIG_SCHEMA_PATH, configJsonSchemaText());
  writeFileSync(PROFILE_SCHEMA_PATH, profileJsonSchemaText());
  console.log(`wrote ${CONFIG_SCHEMA_PATH} and ${PROFILE_SCHEMA_PATH}`);
}
