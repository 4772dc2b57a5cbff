// Split a Markdown knowledge base into sections at ATX headings, so a crash can be matched against one finding at a
// time and quoted with exact line numbers. Only ATX headings (`## Title`) count: the team's notes use them, and
// setext underlines (`---`) are too easy to confuse with tables and front matter.
import { parse as parseYaml } from 'yaml';

export interface Section {
  /** Titles from the top-level heading down to this section's own heading; empty for text before any heading. */
  headingPath: string[];
  /** 1-based line of the heading itself; 0 for text before the first heading. */
  headingLine: number;
  /**
   * 1-based, inclusive: the section's body without the blank lines at either end. A heading followed directly by
   * another heading has an empty body: startLine = headingLine + 1, endLine = headingLine.
   */
  startLine: number;
  endLine: number;
  /** The body lines joined with `\n` (the heading line not included). */
  text: string;
  file: string;
}

export interface FrontMatter {
  data: Record<string, unknown>;
  /** Number of lines the front matter block takes (0 when there is none). */
  lines: number;
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/** A YAML block between `---` lines at the very top of the file; used for the knowledge base's own `url`. */
export function parseFrontMatter(text: string): FrontMatter {
  const lines = splitLines(text);
  if (lines[0]?.trim() !== '---') return { data: {}, lines: 0 };
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (l === '---' || l === '...') {
      let data: unknown;
      try {
        data = parseYaml(lines.slice(1, i).join('\n'));
      } catch {
        // A broken header should not hide the findings themselves: treat it as no metadata.
        data = {};
      }
      const obj = data !== null && typeof data === 'object' && !Array.isArray(data) ? data : {};
      return { data: obj as Record<string, unknown>, lines: i + 1 };
    }
  }
  return { data: {}, lines: 0 };
}

export function parseMarkdown(text: string, file: string): Section[] {
  const lines = splitLines(text);
  const skip = parseFrontMatter(text).lines;
  const sections: Section[] = [];
  const stack: Array<{ level: number; title: string }> = [];
  let current = { headingPath: [] as string[], headingLine: 0, bodyStart: skip + 1 };
  let fence: { char: string; len: number } | undefined;

  const close = (endExclusive: number) => {
    const s = current;
    let a = s.bodyStart;
    let b = endExclusive - 1;
    while (a <= b && lines[a - 1]!.trim() === '') a++;
    while (b >= a && lines[b - 1]!.trim() === '') b--;
    if (s.headingLine === 0 && a > b) return; // nothing before the first heading
    if (a > b) {
      sections.push({
        headingPath: s.headingPath,
        headingLine: s.headingLine,
        startLine: s.headingLine + 1,
        endLine: s.headingLine,
        text: '',
        file,
      });
      return;
    }
    sections.push({
      headingPath: s.headingPath,
      headingLine: s.headingLine,
      startLine: a,
      endLine: b,
      text: lines.slice(a - 1, b).join('\n'),
      file,
    });
  };

  for (let i = skip; i < lines.length; i++) {
    const line = lines[i]!;
    const f = FENCE.exec(line);
    if (fence) {
      // A fence closes with the same character, at least as long, and nothing after it.
      if (f && f[1]![0] === fence.char && f[1]!.length >= fence.len && f[2]!.trim() === '') fence = undefined;
      continue;
    }
    if (f) {
      // Backtick fences may not have backticks in their info string (CommonMark); such a line is not a fence.
      if (!(f[1]![0] === '`' && f[2]!.includes('`'))) {
        fence = { char: f[1]![0]!, len: f[1]!.length };
        continue;
      }
    }
    const h = HEADING.exec(line);
    if (!h) continue;
    close(i + 1);
    const level = h[1]!.length;
    const title = stripClosingHashes(h[2] ?? '');
    while (stack.length > 0 && stack[stack.length - 1]!.level >= level) stack.pop();
    stack.push({ level, title });
    current = { headingPath: stack.map((s) => s.title), headingLine: i + 1, bodyStart: i + 2 };
  }
  close(lines.length + 1);
  return sections;
}

function stripClosingHashes(title: string): string {
  // `## Title ##` -> `Title`; a `#` glued to a word (`C#`) stays.
  const t = title.replace(/(?:^|[ \t]+)#+[ \t]*$/, '');
  return t.trim();
}

function splitLines(text: string): string[] {
  const lines = text.split(/\r\n|\r|\n/);
  // A trailing newline ends the last line; it does not start another one.
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}
