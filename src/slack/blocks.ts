// Views as Block Kit. Untrusted text (log lines, profile names, command output) is escaped; every section stays
// under 3000 characters and a message under 50 blocks and a total size, and whatever does not fit goes into a file
// uploaded next to the message, so nothing is ever cut short.
import type { types } from '@slack/bolt';
import { renderText, seenPhrase } from '../chat/text.ts';
import type { ChatMessage, View } from '../chat/types.ts';
import { duration } from '../format/table.ts';
import { chunkLines, code, esc, who } from './mrkdwn.ts';

type Block = types.KnownBlock;

export const LIMITS = {
  sectionChars: 3000,
  blocks: 50,
  /** Sum of block texts; Slack refuses far larger messages, and people do not read them in a channel anyway. */
  totalChars: 12_000,
  /** A multi-line text longer than this goes as a file: tables and logs read better there. */
  inlineLines: 40,
};

/** Button action IDs; their value is only the attempt id (everything else is looked up again on click). */
export const ACTIONS = {
  stop: 'glm_stop',
  probe: 'glm_probe',
  logs: 'glm_logs',
  draft: 'glm_draft',
  /** Stops an autopilot run (its value: the run id). */
  autopilotStop: 'glm_autopilot_stop',
} as const;

export interface Rendered {
  /** Notification and accessibility fallback. */
  text: string;
  blocks: Block[];
  /** The full text as a file when the blocks could not hold all of it. */
  overflow?: { filename: string; title: string; content: string };
}

const section = (text: string): Block => ({ type: 'section', text: { type: 'mrkdwn', text } });
const context = (text: string): Block => ({ type: 'context', elements: [{ type: 'mrkdwn', text }] });

function button(text: string, actionId: string, value: string, style?: 'danger' | 'primary'): types.Button {
  return {
    type: 'button',
    text: { type: 'plain_text', text },
    action_id: actionId,
    value,
    ...(style ? { style } : {}),
  };
}

// A hung server is left running for inspection: it can still be stopped and probed.
const ACTIVE = new Set(['starting', 'loading', 'ready', 'hung', 'request failed']);
const EMOJI: Record<string, string> = {
  starting: ':hourglass_flowing_sand:',
  loading: ':hourglass_flowing_sand:',
  ready: ':white_check_mark:',
  crashed: ':x:',
  hung: ':zzz:',
  'request failed': ':no_entry:',
  exited: ':black_square_for_stop:',
  stopped: ':black_square_for_stop:',
};

function stateText(v: Extract<View, { type: 'attempt' }>): string {
  if (v.state === 'ready') return `ready in ${duration(v.elapsedS * 1000)}`;
  if (v.state === 'crashed') return `crashed: ${esc(v.detail || 'unknown')}`;
  return v.detail ? `${esc(v.state)}: ${esc(v.detail)}` : esc(v.state);
}

function attemptBlocks(v: Extract<View, { type: 'attempt' }>): Block[] {
  const id = String(v.attemptId);
  const blocks: Block[] = [
    section(
      `${EMOJI[v.state] ?? ':grey_question:'} *attempt #${v.attemptId}* \`${esc(v.profile)}\` on \`${esc(v.host)}\`: ${stateText(v)}`,
    ),
    context(
      `launched by ${who(v.actor)} · ${duration(v.elapsedS * 1000)}${v.simulated ? ' · SIMULATED (SGLang stand-in, no GPU)' : ''}`,
    ),
  ];
  const buttons: types.Button[] = [];
  if (ACTIVE.has(v.state)) {
    buttons.push(button('Stop', ACTIONS.stop, id, 'danger'), button('Probe', ACTIONS.probe, id));
  }
  buttons.push(button('Logs', ACTIONS.logs, id));
  if (v.state === 'crashed' || v.state === 'hung') buttons.push(button('Draft issue', ACTIONS.draft, id));
  blocks.push({ type: 'actions', block_id: `attempt-${id}-actions`, elements: buttons });
  return blocks;
}

function autopilotBlocks(v: Extract<View, { type: 'autopilot' }>): Block[] {
  const running = v.status === 'running';
  const blocks: Block[] = [
    section(
      `${running ? ':robot_face:' : v.status === 'done' ? ':white_check_mark:' : ':black_square_for_stop:'} *autopilot run #${v.runId}* \`${esc(v.profile)}\` on \`${esc(v.host)}\`: ${esc(v.status)}, ${esc(v.phase)} phase, launch ${v.launches} of ${v.budget}, ${duration(v.timeLeftS * 1000)} left`,
    ),
    section(`*now* ${esc(v.current)}\n*best so far* ${esc(v.best)}`),
    context(`started by ${who(v.actor)}${v.detail ? ` · ${esc(v.detail)}` : ''}`),
  ];
  if (running)
    blocks.push({
      type: 'actions',
      block_id: `autopilot-${v.runId}-actions`,
      elements: [button('Stop', ACTIONS.autopilotStop, String(v.runId), 'danger')],
    });
  return blocks;
}

function alertBlocks(v: Extract<View, { type: 'alert' }>): Block[] {
  const d = v.diagnosis;
  const blocks: Block[] = [
    section(
      `:rotating_light: *crash: ${esc(d.category)}* during ${esc(d.phase)}: attempt #${v.attemptId} \`${esc(v.profile)}\` on \`${esc(v.host)}\`, launched by ${who(v.actor)}${v.count > 1 ? ` (*${esc(seenPhrase(v))}*)` : ''}`,
    ),
  ];
  if (d.summary) blocks.push(section(esc(d.summary)));
  if (d.reason) blocks.push(section(`_why: ${esc(d.reason)}_`));
  if (v.survivedBefore) blocks.push(context(esc(v.survivedBefore)));
  if (d.evidence.length) {
    const lines = d.evidence.map((e) => `${String(e.line).padStart(6)}: ${e.text}`);
    for (const [i, c] of chunkLines(lines, LIMITS.sectionChars - 40, (ls) => code(ls.join('\n'))).entries()) {
      blocks.push(section(i === 0 ? `*root lines*\n${c}` : c));
    }
  }
  if (v.flagChanges.length) {
    const lines = v.flagChanges.map((c) => `• \`${esc(c.flag)}\` ${esc(c.from)} → ${esc(c.to)}`);
    const head = `*changed from ${esc(v.comparedWith ?? 'the previous attempt')}*`;
    for (const c of chunkLines([head, ...lines], LIMITS.sectionChars, (ls) => ls.join('\n'))) blocks.push(section(c));
  }
  if (v.noComparison) blocks.push(section(`*what changed:* ${esc(v.noComparison)}`));
  if (v.alreadyTried.length) {
    const tried = v.alreadyTried.map((t) => `#${t.attemptId} \`${esc(t.profile)}\` (${esc(t.outcome)})`);
    const head = `*already tried for ${esc(d.category)}*`;
    for (const c of chunkLines([head, tried.join(', ')], LIMITS.sectionChars, (ls) => ls.join('\n')))
      blocks.push(section(c));
  }
  if (v.nextSteps.length) {
    const lines = ['*usual next steps*', ...v.nextSteps.map((s) => `• ${esc(s)}`)];
    for (const c of chunkLines(lines, LIMITS.sectionChars, (ls) => ls.join('\n'))) blocks.push(section(c));
  }
  if (v.known.length) {
    const lines = [
      '*looks like*',
      ...v.known.map((k) => `• <${k.url.replace(/[<>|]/g, '')}|${esc(k.ref)}>: ${esc(k.title)} (${esc(k.state)})`),
    ];
    for (const c of chunkLines(lines, LIMITS.sectionChars, (ls) => ls.join('\n'))) blocks.push(section(c));
  }
  for (const x of v.excerpts) {
    const where = `${x.file}:${x.startLine}-${x.endLine}`;
    const link = x.url ? `<${x.url.replace(/[<>|]/g, '')}|${esc(where)}>` : `\`${esc(where)}\``;
    const head = `*findings* ${link} ${esc(x.headingPath.join(' › '))}`;
    const lines = x.lines.map((l) => `> ${esc(l)}`);
    for (const c of chunkLines([head, ...lines], LIMITS.sectionChars, (ls) => ls.join('\n'))) blocks.push(section(c));
  }
  blocks.push({
    type: 'actions',
    block_id: `alert-${v.attemptId}-actions`,
    elements: [
      button('Logs', ACTIONS.logs, String(v.attemptId)),
      button('Draft issue', ACTIONS.draft, String(v.attemptId)),
    ],
  });
  return blocks;
}

/** A user (U.../W...) or user group (S...) mention. */
const mention = (id: string) => (/^S[A-Z0-9]{2,}$/.test(id) ? `<!subteam^${id}>` : who(id));

function reportHead(v: Extract<View, { type: 'report' }>): string {
  return `${esc(v.verdict)} ${esc(v.title)}${v.mention.length ? ` ${v.mention.map(mention).join(' ')}` : ''}`;
}

function reportBlocks(v: Extract<View, { type: 'report' }>): Block[] {
  const links = v.links
    .map((l) => (l.url ? `<${l.url}|${esc(l.label)}>` : l.text ? `${esc(l.label)}: ${esc(l.text)}` : null))
    .filter((x): x is string => x !== null);
  const out: Block[] = [
    section(`*${esc(v.verdict)}* ${esc(v.title)}${v.mention.length ? `\n${v.mention.map(mention).join(' ')}` : ''}`),
  ];
  const facts = [...v.facts.map(esc), ...links];
  if (facts.length) out.push(context(facts.join(' · ')));
  return [...out, ...textBlocks(v.body)];
}

function textBlocks(text: string): Block[] {
  const lines = text.replace(/\s+$/, '').split('\n');
  if (lines.length === 1) return chunkLines(lines, LIMITS.sectionChars, (ls) => esc(ls.join(''))).map(section);
  return chunkLines(lines, LIMITS.sectionChars, (ls) => code(ls.join('\n'))).map(section);
}

const size = (b: Block): number => JSON.stringify(b).length;

/** The complete alert as plain text, for the file when it does not fit a message (the terminal text abridges). */
function alertFile(v: Extract<View, { type: 'alert' }>): string {
  const d = v.diagnosis;
  const out = [
    `crash: ${d.category} during ${d.phase}: attempt #${v.attemptId} ${v.profile} on ${v.host}, launched by ${v.actor}${v.count > 1 ? ` (${seenPhrase(v)})` : ''}`,
    d.summary,
    ...(d.reason ? [`why: ${d.reason}`] : []),
    ...(v.survivedBefore ? [v.survivedBefore] : []),
    '',
    'root lines:',
    ...d.evidence.map((e) => `${String(e.line).padStart(6)}: ${e.text}`),
  ];
  if (v.flagChanges.length) {
    out.push('', `changed from ${v.comparedWith ?? 'the previous attempt'}:`);
    for (const c of v.flagChanges) out.push(`  ${c.flag}: ${c.from} -> ${c.to}`);
  }
  if (v.noComparison) out.push('', `what changed: ${v.noComparison}`);
  if (v.alreadyTried.length) {
    out.push('', `already tried for ${d.category}:`);
    for (const t of v.alreadyTried) out.push(`  #${t.attemptId} ${t.profile} (${t.outcome})`);
  }
  if (v.nextSteps.length) out.push('', 'usual next steps:', ...v.nextSteps.map((x) => `  - ${x}`));
  if (v.known.length)
    out.push('', 'looks like:', ...v.known.map((k) => `  ${k.ref}: ${k.title} (${k.state}) ${k.url}`));
  for (const x of v.excerpts) {
    out.push(
      '',
      `findings: ${x.file}:${x.startLine}-${x.endLine}  ${x.headingPath.join(' > ')}${x.url ? `  ${x.url}` : ''}`,
    );
    for (const l of x.lines) out.push(`  > ${l}`);
  }
  return `${out.join('\n')}\n`;
}

function firstLine(s: string): string {
  const l = s.split('\n').find((x) => x.trim()) ?? '';
  return l.length > 300 ? `${l.slice(0, 297)}...` : l;
}

export function renderMessage(msg: ChatMessage, opts: { filename?: string } = {}): Rendered {
  const full = renderText(msg);
  const view = msg.view;
  // The fallback is what notifications show: for a crash, it mentions whoever launched the attempt.
  const text =
    view?.type === 'report'
      ? reportHead(view)
      : view?.type === 'alert'
        ? `crash: ${esc(view.diagnosis.category)} during ${esc(view.diagnosis.phase)}: attempt #${view.attemptId} ${esc(view.profile)} on ${esc(view.host)}, launched by ${who(view.actor)}`
        : esc(firstLine(msg.text || full));
  const filename =
    opts.filename ??
    (view?.type === 'alert' ? `attempt-${view.attemptId}-crash.txt` : view ? 'glm-message.txt' : 'glm-output.txt');
  const overflow = { filename, title: firstLine(full), content: view?.type === 'alert' ? alertFile(view) : full };
  const lineCount = full.split('\n').length;
  if (!view && lineCount > LIMITS.inlineLines) {
    // Tables and logs: a one-line summary here, the whole thing as a file.
    return {
      text,
      blocks: [section(`${esc(firstLine(full))}\n_${lineCount} lines: see the file ${esc(filename)}_`)],
      overflow,
    };
  }
  const blocks =
    view?.type === 'attempt'
      ? attemptBlocks(view)
      : view?.type === 'alert'
        ? alertBlocks(view)
        : view?.type === 'report'
          ? reportBlocks(view)
          : view?.type === 'autopilot'
            ? autopilotBlocks(view)
            : view?.type === 'stopped'
              ? [section(`:black_square_for_stop: stopped by ${who(view.actor)}\n${code(view.text)}`)]
              : textBlocks(full);
  // Keep the blocks that fit, in order; when some do not, the complete text goes as a file beside them.
  const kept: Block[] = [];
  let total = 0;
  for (const b of blocks) {
    const n = size(b);
    if (kept.length >= LIMITS.blocks - 1 || total + n > LIMITS.totalChars) {
      kept.push(context(`_more than a message holds: everything is in the file ${esc(filename)}_`));
      return { text, blocks: kept, overflow };
    }
    kept.push(b);
    total += n;
  }
  return { text, blocks: kept };
}
