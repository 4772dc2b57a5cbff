import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { profileJsonSchema, SCHEMA_PATH } from '../../scripts/write-profile-schema.ts';
import { FLAGS } from '../../src/profiles/index.ts';

describe('schema/profile.schema.json', () => {
  it('is up to date with the zod schema (run: node bin/tsx-run.js scripts/write-profile-schema.ts)', () => {
    expect(JSON.parse(readFileSync(SCHEMA_PATH, 'utf8'))).toEqual(profileJsonSchema());
  });

  it('has every typed field, forbids unknown keys, and offers the shipped choice values without closing the list', () => {
    const s = profileJsonSchema() as {
      properties: Record<string, { enum?: string[]; examples?: string[] }>;
      additionalProperties: boolean;
    };
    for (const f of FLAGS) expect(s.properties).toHaveProperty(f.field);
    expect(s.additionalProperties).toBe(false);
    expect(s.properties.nsa_decode_backend?.examples).toContain('flashmla_sparse');
    expect(s.properties.dsa_decode_backend?.examples).toContain('tilelang');
    // A value newer than the shipped table is the host's --help's to judge at launch, not the editor's.
    expect(s.properties.attention_backend?.enum).toBeUndefined();
  });

  it('is what every shipped profile points its editor at', () => {
    const dir = fileURLToPath(new URL('../../profiles/', import.meta.url));
    for (const name of ['glm5-nvfp4', 'glm5-attempt3', 'small']) {
      expect(readFileSync(`${dir}${name}.yaml`, 'utf8').split('\n')[0]).toBe(
        '# yaml-language-server: $schema=../schema/profile.schema.json',
      );
    }
  });
});
