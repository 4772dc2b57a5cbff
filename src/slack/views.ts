// The Slack face's own interactive pieces: the stop confirmation modal and the "replace the running server?" prompt.
// Both name what will be stopped and who launched it; untrusted parts are escaped.
import type { types } from '@slack/bolt';
import { duration } from '../format/table.ts';
import { type Attempt, attemptWhere } from '../ledger/attempts.ts';
import { esc, who } from './mrkdwn.ts';

export const STOP_MODAL = 'glm_stop_confirm';
export const REPLACE = { confirm: 'glm_replace', cancel: 'glm_cancel' } as const;

const plain = (text: string, max: number): types.PlainTextElement => ({
  type: 'plain_text',
  text: text.length > max ? `${text.slice(0, max - 1)}…` : text,
});

export function describeAttempt(a: Attempt, now: number): string {
  return `attempt #${a.id} \`${esc(a.profile)}\` on \`${esc(attemptWhere(a))}\` (port ${a.port}, ${esc(a.status)} for ${duration(now - a.startedAt)}), launched by ${who(a.actor)}`;
}

export function stopModal(a: Attempt, channel: string, now: number): types.ModalView {
  return {
    type: 'modal',
    callback_id: STOP_MODAL,
    private_metadata: JSON.stringify({ attempt: a.id, channel }),
    title: plain(`Stop attempt #${a.id}?`, 24),
    submit: plain('Stop it', 24),
    close: plain('Cancel', 24),
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `:warning: This stops ${describeAttempt(a, now)}.\nThe server's process group gets SIGTERM, then SIGKILL after the grace period. Anyone using it loses it.`,
        },
      },
    ],
  };
}

export function replaceBlocks(running: Attempt, profile: string, pendingId: string, now: number): types.KnownBlock[] {
  return [
    {
      type: 'section',
      text: {
        type: 'mrkdwn',
        text: `:warning: \`${esc(running.host)}\` already runs ${describeAttempt(running, now)}.\nLaunching \`${esc(profile)}\` there stops it first.`,
      },
    },
    {
      type: 'actions',
      block_id: `replace-${running.id}`,
      elements: [
        {
          type: 'button',
          action_id: REPLACE.confirm,
          value: pendingId,
          style: 'danger',
          text: plain(`Stop #${running.id} and launch`, 75),
          confirm: {
            title: plain(`Replace attempt #${running.id}?`, 100),
            text: plain(
              `Attempt #${running.id} (${running.profile} on ${running.host}, launched by ${running.actor}) will be stopped and ${profile} launched in its place.`,
              300,
            ),
            confirm: plain('Replace', 30),
            deny: plain('Keep it', 30),
            style: 'danger',
          },
        },
        { type: 'button', action_id: REPLACE.cancel, value: pendingId, text: plain('Cancel', 75) },
      ],
    },
  ];
}
