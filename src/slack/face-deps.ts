// What the Slack handlers share, and the few ways they speak: every reply, thread message, file and update is put in
// the persistent outbox (never sent directly), so a Slack outage or a restart delays it but never loses or repeats it.
import { randomUUID } from 'node:crypto';
import type { types, webApi } from '@slack/bolt';
import type { AccessPolicy } from '../access/policy.ts';
import type { App } from '../app.ts';
import type { Logger } from '../logger.ts';
import type { CommandContext, CommandDef, Identity } from '../runtime/define.ts';
import { placeOf } from '../runtime/registry.ts';
import type { SlackPayload } from './adapter.ts';
import type { PendingStore } from './pending.ts';

export interface FaceDeps {
  glm: App;
  client: webApi.WebClient;
  policy: AccessPolicy;
  /** Where attempt messages and alerts go. */
  channel: string;
  log: Logger;
  pending: PendingStore;
  /** Runs work after the ack, keeping hold of it for shutdown and logging what escapes. */
  track(work: Promise<unknown>): void;
}

/** The notifier's key for an attempt's parent message (src/alerts/notifier.ts): threads and updates hang off it. */
export const parentKey = (attemptId: number) => `attempt:${attemptId}:parent`;

export function commandDef(deps: FaceDeps, name: string): CommandDef {
  const def = deps.glm.dispatch.commands.find((c) => c.name === name);
  if (!def) throw new Error(`no command ${name}`);
  return def;
}

export function slackContext(deps: FaceDeps, identity: Identity): CommandContext {
  const log = deps.log.child({ face: 'slack', user: identity.user, channel: identity.channel, via: identity.via });
  return {
    engine: deps.glm.engine,
    actor: identity.user,
    origin: 'slack',
    log,
    // Launch progress reaches Slack as the attempt's message and thread (the notifier); these lines are for the log.
    say: (text) => log.debug({ say: text }, 'progress'),
    diagnoser: deps.glm.diagnoser,
    longLived: true,
    commands: deps.glm.dispatch.commands,
    identity,
    authorize: (def, ctx) => deps.policy.decide(def, ctx.identity ?? identity),
  };
}

function enqueue(deps: FaceDeps, item: Parameters<App['outbox']['enqueue']>[0]): void {
  deps.glm.outbox.enqueue(item);
  deps.glm.delivery?.poke();
}

/** An answer only the asker sees: through the command's response_url while it lasts, else chat.postEphemeral. */
export function reply(
  deps: FaceDeps,
  identity: Identity,
  responseUrl: string | undefined,
  msg: { text: string; mrkdwn?: string; blocks?: types.KnownBlock[]; filename?: string },
  replaceOriginal = false,
): void {
  const payload: SlackPayload = { ...msg, reply: { user: identity.user, responseUrl, replaceOriginal } };
  enqueue(deps, {
    key: `reply:${randomUUID()}`,
    kind: 'post',
    channel: identity.channel ?? deps.channel,
    payload,
    at: deps.glm.engine.clock.now(),
  });
}

/** A message in the attempt's thread (in the channel when the attempt has no message, e.g. a terminal launch). */
export function threadPost(deps: FaceDeps, attemptId: number, msg: { text: string; mrkdwn?: string }): void {
  enqueue(deps, {
    key: `thread:${attemptId}:${randomUUID()}`,
    kind: 'post',
    channel: deps.channel,
    parentKey: parentKey(attemptId),
    payload: msg satisfies SlackPayload,
    at: deps.glm.engine.clock.now(),
  });
}

export function threadUpload(
  deps: FaceDeps,
  attemptId: number,
  file: { filename: string; title: string; content: string },
): void {
  enqueue(deps, {
    key: `upload:${attemptId}:${randomUUID()}`,
    kind: 'upload',
    channel: deps.channel,
    parentKey: parentKey(attemptId),
    payload: { text: file.title, ...file },
    at: deps.glm.engine.clock.now(),
  });
}

/** Clicks that end before reaching the command registry are audited here (the registry audits the rest). */
export function auditClick(
  deps: FaceDeps,
  identity: Identity,
  command: string,
  args: Record<string, unknown>,
  decision: 'allow' | 'deny',
  result: string,
): void {
  const ctx = { identity, origin: 'slack' } as CommandContext;
  deps.glm.engine.audit.record({
    at: deps.glm.engine.clock.now(),
    actor: identity.user,
    origin: 'slack',
    place: placeOf(ctx),
    command,
    args,
    decision,
    result,
    durationMs: 0,
  });
}
