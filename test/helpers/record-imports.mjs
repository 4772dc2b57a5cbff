// Preloaded (--import) into a CLI process by test/cli/startup.test.ts: every module URL the process resolves is
// appended to the file named by GLM_RECORD_IMPORTS, so a test can tell what a command loaded.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.GLM_RECORD_IMPORTS, r.url + '\\n');
  return r;
}`)}`,
);
