// Excerpts as terminal text: where (file:lines and heading path), the lines themselves indented, then the link.
import { basename } from 'node:path';
import type { Excerpt } from './excerpt.ts';

export function formatExcerpts(excerpts: readonly Excerpt[]): string {
  if (excerpts.length === 0) return 'no matching findings';
  // The knowledge base's name is only worth a column when the excerpts come from more than one.
  const several = new Set(excerpts.map((e) => e.source)).size > 1;
  return excerpts
    .map((e) => {
      const where = `${basename(e.file)}:${e.startLine === e.endLine ? e.startLine : `${e.startLine}-${e.endLine}`}`;
      const head = `${where}  ${e.headingPath.join(' > ') || '(top of file)'}${several ? `  [${e.source}]` : ''}`;
      const body = e.lines.map((l) => `    ${l.replace(/\s+$/, '')}`);
      return [head, ...body, ...(e.url ? [`    ${e.url}`] : [])].join('\n');
    })
    .join('\n\n');
}
