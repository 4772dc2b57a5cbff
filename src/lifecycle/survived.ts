// What a person sees of the errors a serving server survived (`error_survived` events, early-alert.ts): one quiet
// line in `status` and `probe`, a count in `attempts`, and one line in a crash alert of that server, so that an error it later
// dies of is linked to the ones it logged before. Never a notice of its own: a server that answers pages nobody.
import { clip, when } from '../format/table.ts';
import type { Survived } from '../ledger/attempts.ts';

/** A root line in a one-line note: enough to recognise it (the whole line is in the log and in the event). */
export const SURVIVED_ROOT_CHARS = 120;

// The number is of different errors (class and root line): a repeat of one is not counted again (early-alert.ts).
const errors = (n: number) => (n === 1 ? '1 error' : `${n} different errors`);

/** `the last at 2026-12-02 02:51 UTC: other: ConnectionRefusedError: ...` (the root redacted by the ledger, then cut). */
export function lastSurvived(s: Survived): string {
  return `the last at ${when(s.lastAt)} UTC: ${s.category}: ${clip(s.root, SURVIVED_ROOT_CHARS)}`;
}

/** `2 different errors (the last at ...)`: probe's line. */
export function survivedCount(s: Survived): string {
  return `${errors(s.count)} (${lastSurvived(s)})`;
}

/** status: `attempt #3 survived 2 different errors (the last at ...)`. */
export function survivedNote(attemptId: number, s: Survived): string {
  return `attempt #${attemptId} survived ${survivedCount(s)}`;
}

/**
 * A crash alert: `2 different errors were survived before this (the last at ...)`. `s` leaves out the crash's own
 * error (AttemptStore.survivedExcept): the server did not survive that one.
 */
export function survivedBefore(s: Survived): string {
  return `${errors(s.count)} ${s.count === 1 ? 'was' : 'were'} survived before this (${lastSurvived(s)})`;
}
