// Buttons on attempt messages (Stop, Probe, Logs), the stop confirmation modal, and the "replace the running
// server?" prompt. A button's value is only an id: the attempt (or pending confirmation) is looked up again, and the
// clicker is authorised again, on every click; the clicker is often not the person who launched.

import type {
  BlockAction,
  ButtonAction,
  SlackActionMiddlewareArgs,
  SlackViewMiddlewareArgs,
  ViewSubmitAction,
} from '@slack/bolt';
import { autopilotStore } from '../autopilot/store.ts';
import { describeRefusal } from '../errors-render.ts';
import type { Attempt } from '../ledger/attempts.ts';
import type { CommandOutput, Identity } from '../runtime/define.ts';
import { launchClash, launchRefusal, runCommand } from './commands.ts';
import { auditClick, commandDef, type FaceDeps, reply, slackContext, threadPost, threadUpload } from './face-deps.ts';
import { code, esc, who } from './mrkdwn.ts';
import { replaceBlocks, stopModal } from './views.ts';

type ClickArgs = SlackActionMiddlewareArgs<BlockAction<ButtonAction>>;

function clicker(body: BlockAction): Identity {
  return {
    user: body.user.id,
    team: body.team?.id ?? body.user.team_id,
    channel: body.channel?.id ?? (body.container as { channel_id?: string } | undefined)?.channel_id,
    via: 'button',
  };
}

function attemptOf(deps: FaceDeps, value: string | undefined): Attempt | undefined {
  const id = Number(value);
  return Number.isSafeInteger(id) && id > 0 ? deps.glm.engine.attempts.get(id) : undefined;
}

/** The clicked attempt; when it is gone, the click is audited and the clicker told, and undefined returned. */
function clickedAttempt(deps: FaceDeps, identity: Identity, command: string, args: ClickArgs): Attempt | undefined {
  const a = attemptOf(deps, args.action.value);
  if (!a) {
    auditClick(deps, identity, command, { attempt: args.action.value }, 'allow', 'error: no such attempt');
    reply(deps, identity, args.body.response_url, { text: 'error: that attempt is not in the ledger any more' });
  }
  return a;
}

/** A button on an attempt's message: acked at once; the clicker and the attempt, or undefined when it is gone. */
async function attemptClick(
  deps: FaceDeps,
  command: string,
  click: ClickArgs,
): Promise<{ who: Identity; a: Attempt } | undefined> {
  await click.ack();
  const who = clicker(click.body);
  const a = clickedAttempt(deps, who, command, click);
  return a ? { who, a } : undefined;
}

/** Stop: authorise, then ask in a modal that names the server and who launched it. */
export function onStopClick(deps: FaceDeps) {
  return async (click: ClickArgs): Promise<void> => {
    const { body } = click;
    const got = await attemptClick(deps, 'stop', click);
    if (!got) return;
    const { who: who_, a } = got;
    const args = { attempt: a.id, host: a.host };
    const d = await deps.policy.decide(commandDef(deps, 'stop'), who_);
    if (!d.allow) {
      auditClick(deps, who_, 'stop', args, 'deny', `denied: ${d.reason}`);
      reply(deps, who_, body.response_url, { text: describeRefusal(d) });
      return;
    }
    if (!a.active) {
      auditClick(deps, who_, 'stop', args, 'allow', `not running (${a.status})`);
      reply(deps, who_, body.response_url, { text: `attempt #${a.id} is not running any more (${a.status})` });
      return;
    }
    try {
      await deps.client.views.open({
        trigger_id: body.trigger_id,
        view: stopModal(a, who_.channel ?? deps.channel, deps.glm.engine.clock.now()),
      });
      auditClick(deps, who_, 'stop', args, 'allow', 'confirmation shown');
    } catch (e) {
      // The trigger lives 3 s and works once: nothing to retry later. Say so and how to go on.
      auditClick(deps, who_, 'stop', args, 'allow', `error: confirmation not shown: ${(e as Error).message}`);
      reply(deps, who_, body.response_url, {
        text: `error: could not show the stop confirmation (${(e as Error).message})\n  click Stop again, or type /glm stop --attempt ${a.id}`,
      });
    }
  };
}

/** The modal's Stop: authorised again (the registry does it), and only if that attempt is still the one running. */
export function onStopConfirmed(deps: FaceDeps) {
  return async ({ ack, body, view }: SlackViewMiddlewareArgs<ViewSubmitAction>): Promise<void> => {
    await ack();
    let meta: { attempt?: number; channel?: string } = {};
    try {
      meta = JSON.parse(view.private_metadata || '{}');
    } catch {
      // treated as unknown below
    }
    const identity: Identity = {
      user: body.user.id,
      team: body.team?.id ?? body.user.team_id,
      channel: meta.channel,
      via: 'modal',
    };
    deps.track(stopAttempt(deps, identity, Number(meta.attempt), undefined));
  };
}

async function stopAttempt(deps: FaceDeps, identity: Identity, id: number, responseUrl: string | undefined) {
  const a = deps.glm.engine.attempts.get(id);
  if (!a?.active) {
    auditClick(deps, identity, 'stop', { attempt: id }, 'allow', 'not running any more');
    reply(deps, identity, responseUrl, { text: `attempt #${id} is not running any more: nothing stopped` });
    return false;
  }
  const out = await deps.glm.dispatch.run(`stop --attempt ${a.id}`, slackContext(deps, identity));
  if (out.exitCode) {
    reply(deps, identity, responseUrl, { text: out.text });
    return false;
  }
  // The message and its thread say so through the notifier, as for every other way an attempt ends.
  return true;
}

/** Probe: the health report, in the attempt's thread for everyone watching it. */
export function onProbeClick(deps: FaceDeps) {
  return async (args: ClickArgs): Promise<void> => {
    const { body } = args;
    const got = await attemptClick(deps, 'probe', args);
    if (!got) return;
    const { who: identity, a } = got;
    deps.track(
      (async () => {
        const out = await deps.glm.dispatch.run(`probe --attempt ${a.id}`, slackContext(deps, identity));
        if (out.exitCode === 2) reply(deps, identity, body.response_url, { text: out.text });
        else
          threadPost(deps, a.id, {
            text: out.text,
            mrkdwn: `:stethoscope: probe by ${who(identity.user)}\n${code(out.text)}`,
          });
      })(),
    );
  };
}

/**
 * A button that runs a command on its attempt (the button's value is the attempt id): acked at once, the command run
 * after through the registry, its output handed to `done`.
 */
function onAttemptCommand(
  deps: FaceDeps,
  words: (id: number) => string,
  done: (out: CommandOutput, identity: Identity, id: number, responseUrl: string | undefined) => void,
) {
  return async ({ ack, body, action }: ClickArgs): Promise<void> => {
    await ack();
    const identity = clicker(body);
    const id = Number(action.value);
    deps.track(
      (async () => {
        const out = await deps.glm.dispatch.run(words(Number.isSafeInteger(id) ? id : 0), slackContext(deps, identity));
        done(out, identity, id, body.response_url);
      })(),
    );
  };
}

/** Logs: the log tail as a file in the attempt's thread (never as truncated text). */
export function onLogsClick(deps: FaceDeps) {
  return onAttemptCommand(
    deps,
    (id) => `logs --attempt ${id} --lines 500`,
    (out, identity, id, responseUrl) => {
      if (out.exitCode) {
        reply(deps, identity, responseUrl, { text: out.text });
        return;
      }
      threadUpload(deps, id, {
        filename: `attempt-${id}.log`,
        title: `attempt #${id}: last 500 log lines`,
        content: out.text,
      });
    },
  );
}

/**
 * Draft issue: the upstream bug report for this attempt (and the attempts of its model tried on its host) as a file
 * in the thread, with the known duplicates and the prefilled new-issue link when it fits. A person files it.
 */
export function onDraftClick(deps: FaceDeps) {
  return onAttemptCommand(
    deps,
    (id) => `draft-issue --primary ${id} --json`,
    (out, identity, id, responseUrl) => {
      const d = out.data as
        | { title: string; body: string; url?: string; duplicates?: { known: unknown[]; found: unknown[] } }
        | undefined;
      if (out.exitCode || !d) {
        reply(deps, identity, responseUrl, { text: out.text });
        return;
      }
      const dupes = (d.duplicates?.known.length ?? 0) + (d.duplicates?.found.length ?? 0);
      // A Slack section holds 3000 characters: a longer prefilled link stays in the terminal's output only.
      const link = d.url && d.url.length < 2800 ? d.url.replace(/[<>|]/g, '') : undefined;
      threadUpload(deps, id, {
        filename: `attempt-${id}-issue-draft.md`,
        title: `draft upstream report: ${d.title}`,
        content: `${d.title}\n\n${d.body}`,
      });
      threadPost(deps, id, {
        text: `draft issue for attempt #${id}: ${d.title}`,
        mrkdwn: `:memo: draft issue by ${who(identity.user)}: *${esc(d.title)}*${dupes ? `\n:warning: ${dupes} known upstream issue(s) may already cover it: read the draft's first lines` : ''}${link ? `\n<${link}|open it prefilled on GitHub>` : '\n(too long for a prefilled link in Slack: paste the file into a new issue)'}`,
      });
    },
  );
}

/** "Stop #N and launch": stop what the prompt named (if it still runs), then launch what was asked. */
export function onReplaceClick(deps: FaceDeps) {
  return async ({ ack, body, action }: ClickArgs): Promise<void> => {
    await ack();
    const identity = clicker(body);
    const p = deps.pending.take(action.value ?? '');
    if (!p || p.identity.user !== identity.user) {
      auditClick(
        deps,
        identity,
        'launch',
        { confirm: 'replace' },
        p ? 'deny' : 'allow',
        p ? 'denied: not the requester' : 'expired',
      );
      reply(
        deps,
        identity,
        body.response_url,
        { text: 'this confirmation expired or was used: run the command again' },
        true,
      );
      return;
    }
    deps.track(
      (async () => {
        const running = (await launchClash(deps, identity, p.text))?.running;
        if (running && running.id !== p.replaces) {
          // Something else runs now: ask again about that one.
          const id = deps.pending.add({ ...p, replaces: running.id });
          reply(
            deps,
            identity,
            body.response_url,
            {
              text: `${p.host} now runs attempt #${running.id}: replace it?`,
              blocks: replaceBlocks(running, p.text.split(/\s+/)[1] ?? '', id, deps.glm.engine.clock.now()),
            },
            true,
          );
          return;
        }
        if (running) {
          // Everything that could refuse the launch is asked first: a refusal leaves the running server alone.
          const refusal = await launchRefusal(deps, identity, p.text, running.id);
          if (refusal) {
            auditClick(
              deps,
              identity,
              'launch',
              { confirm: 'replace' },
              'allow',
              `not replaced: ${refusal.split('\n')[0]}`,
            );
            reply(
              deps,
              identity,
              body.response_url,
              { text: `not replaced: ${refusal.replace(/^error: /, '')}\nattempt #${running.id} keeps running` },
              true,
            );
            return;
          }
          if (!(await stopAttempt(deps, { ...identity, channel: p.identity.channel }, running.id, body.response_url)))
            return;
        }
        reply(
          deps,
          identity,
          body.response_url,
          { text: `stopped attempt #${p.replaces}; launching: /glm ${p.text}` },
          true,
        );
        await runCommand(deps, { ...p.identity, via: 'button' }, p.text, body.response_url);
      })(),
    );
  };
}

export function onCancelClick(deps: FaceDeps) {
  return async ({ ack, body, action }: ClickArgs): Promise<void> => {
    await ack();
    const identity = clicker(body);
    const p = deps.pending.take(action.value ?? '');
    auditClick(
      deps,
      identity,
      'launch',
      { confirm: 'cancel' },
      'allow',
      p ? `cancelled replacing attempt #${p.replaces}` : 'expired',
    );
    reply(
      deps,
      identity,
      body.response_url,
      { text: p ? `cancelled: /glm ${p.text} was not launched` : 'nothing to cancel' },
      true,
    );
  };
}

/**
 * Stop on an autopilot run's message: `autopilot --cancel` through the registry as the clicker, so the operator role
 * is checked and the click audited like the typed command; the run stops every server it started.
 */
export function onAutopilotStopClick(deps: FaceDeps) {
  return async ({ ack, body, action }: ClickArgs): Promise<void> => {
    await ack();
    const identity = clicker(body);
    const id = Number(action.value);
    const run = Number.isSafeInteger(id) && id > 0 ? autopilotStore(deps.glm.engine.ledger).get(id) : undefined;
    if (!run || (run.status !== 'running' && run.status !== 'interrupted')) {
      auditClick(deps, identity, 'autopilot', { cancel: true, run: action.value }, 'allow', 'not running any more');
      reply(deps, identity, body.response_url, { text: `autopilot run #${action.value} is not running any more` });
      return;
    }
    deps.track(
      (async () => {
        const out = await deps.glm.dispatch.run(`autopilot --cancel --host ${run.host}`, slackContext(deps, identity));
        reply(deps, identity, body.response_url, { text: out.text });
      })(),
    );
  };
}
