// The package's own folder (where package.json, catalog/, profiles/, templates/ and knowledge/ live), wherever the
// code runs from: the TypeScript sources (src/...) or their compiled copy (dist/src/...), which sits one level deeper.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`package.json not found above ${from}`);
  }
}

export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
