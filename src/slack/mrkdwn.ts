// Slack's mrkdwn, safely: untrusted text has & < > escaped (and nothing else, as Slack asks), so a log line or a
// profile name can never become a mention, a link or a broadcast. Inbound text gets the reverse treatment.

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A user reference: a real mention for a Slack user ID, plain escaped text for anyone else (terminal users). */
export function who(actor: string): string {
  return /^[UW][A-Z0-9]{2,}$/.test(actor) ? `<@${actor}>` : esc(actor);
}

/** Text in a code block; backticks inside cannot close it early. */
export function code(s: string): string {
  return `\`\`\`${esc(s).replace(/```/g, '`\u200b``')}\`\`\``;
}

/**
 * Splits lines into chunks whose rendered size stays under `max`, never inside a line (a single overlong line is
 * cut into pieces). Used to keep each section under Block Kit's 3000 characters without dropping anything.
 */
export function chunkLines(lines: string[], max: number, render: (chunk: string[]) => string): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  const pieces = lines.flatMap((l) => {
    const parts: string[] = [];
    for (let i = 0; i < l.length; i += max - 100) parts.push(l.slice(i, i + max - 100));
    return parts.length ? parts : [''];
  });
  for (const p of pieces) {
    if (cur.length && render([...cur, p]).length > max) {
      out.push(render(cur));
      cur = [];
    }
    cur.push(p);
  }
  if (cur.length) out.push(render(cur));
  return out;
}

/**
 * The slash command's text as a person meant it: Slack escapes & < >, renders mentions as <@U123|name>, and many
 * clients turn `--` into an em dash and quotes into curly ones.
 */
export function normalizeCommandText(text: string): string {
  return text
    .replace(/<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g, '$1')
    .replace(/<#([CG][A-Z0-9]+)(?:\|[^>]*)?>/g, '$1')
    .replace(/<!subteam\^([A-Z0-9]+)(?:\|[^>]*)?>/g, '$1')
    .replace(/(^|\s)[\u2014\u2013](?=\S)/g, '$1--')
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();
}
