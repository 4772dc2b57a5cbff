// Who did what, where, with which result: every command and click, allowed or denied.
import { redactText, redactValue } from '../redact.ts';
import type { Db } from './db.ts';

export interface AuditEntry {
  at: number;
  actor: string;
  origin: string;
  place: string | null;
  command: string;
  args: unknown;
  decision: 'allow' | 'deny';
  result: string;
  durationMs: number;
}

export function createAuditLog(db: Db) {
  const insert = db.prepare(
    'INSERT INTO audit (at, actor, origin, place, command, args_json, decision, result, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return {
    record(e: AuditEntry): void {
      insert.run(
        e.at,
        e.actor,
        e.origin,
        e.place,
        e.command,
        // Redacted as a value, then serialised: a regex over the JSON could cut it open.
        JSON.stringify(redactValue(e.args ?? {})),
        e.decision,
        redactText(e.result).slice(0, 500),
        e.durationMs,
      );
    },
    list(limit = 50): AuditEntry[] {
      return (db.prepare('SELECT * FROM audit ORDER BY id DESC LIMIT ?').all(limit) as Record<string, unknown>[]).map(
        (r) => ({
          at: r.at as number,
          actor: r.actor as string,
          origin: r.origin as string,
          place: (r.place as string) ?? null,
          command: r.command as string,
          args: readArgs(r.args_json),
          decision: r.decision as 'allow' | 'deny',
          result: (r.result as string) ?? '',
          durationMs: (r.duration_ms as number) ?? 0,
        }),
      );
    },
  };
}

/** One unreadable row (written by an older bot) never stops a listing: it shows as what it is. */
function readArgs(raw: unknown): unknown {
  try {
    return JSON.parse(String(raw));
  } catch {
    return { unreadable: redactText(String(raw)).slice(0, 200) };
  }
}

export type AuditLog = ReturnType<typeof createAuditLog>;
