// The end of a run: the winner saved as a profile file (extends the starting profile, naming only what changed),
// left running or stopped as asked, every other server stopped, the GPUs let go; a report with every trial, a chart
// of throughput per trial with the SLO, and the upstream draft for the crashes met.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderBenchChart } from '../bench-load/chart.ts';
import type { LevelMetrics } from '../bench-load/metrics.ts';
import { createBenchStore } from '../bench-load/store.ts';
import { bisectUnits } from '../fleet/bisect.ts';
import { duration, table } from '../format/table.ts';
import { resolveProfileName, variantsDir } from '../profiles/saved.ts';
import { variantText } from '../profiles/variant.ts';
import { draftIssue } from '../reports/issue.ts';
import { sloText } from './slo.ts';
import type { AutopilotRun, Trial } from './store.ts';
import { type AutopilotOutcome, type Ctl, launchesOf, launchTrial, stopGroup, updateView } from './trial.ts';

/** The best trial that met the SLO; else the working configuration's find trial. */
export function winnerOf(trials: Trial[]): Trial | null {
  const ok = trials.filter((t) => t.phase === 'tune' && t.outcome === 'measured' && t.meetsSlo);
  const best = ok.reduce<Trial | null>((b, t) => (!b || (t.throughput ?? 0) > (b.throughput ?? 0) ? t : b), null);
  return best ?? trials.find((t) => t.outcome === 'works') ?? null;
}

export async function finishRun(
  ctl: Ctl,
  run: AutopilotRun,
  ending: string,
  cancelled: boolean,
): Promise<AutopilotOutcome> {
  const { engine, store } = ctl;
  const trials = store.trials(run.id);
  const winner = cancelled ? null : winnerOf(trials);
  const notes: string[] = [];
  let kept: number | null = null;
  if (winner && run.params.keep) {
    const live = engine.attempts
      .allActiveOn(run.host)
      .find((a) => a.groupKey === run.groupKey && a.profile === winner.profile);
    if (live) kept = live.id;
    else if (launchesOf(engine, run).length < run.params.attempts && engine.clock.now() < run.deadlineAt) {
      const r = await launchTrial(ctl, run, resolveProfileName(engine, winner.profile)).catch((e: Error) => ({
        outcome: 'failed' as const,
        attempt: undefined,
        error: e.message,
      }));
      if (r.outcome === 'ready' && r.attempt) kept = r.attempt.id;
      else notes.push(`the winner could not be relaunched to keep it running (${r.outcome})`);
    } else notes.push('the winner was not left running: no launch left in the budget to start it again');
  }
  await stopGroup(ctl, run, kept);
  const profileFile = winner ? saveWinner(ctl, run, winner.profile) : null;
  const chartPath = await chart(ctl, run, trials);
  const crashed = trials.filter(
    (t) => t.attemptId !== null && ['crashed', 'smoke_failed', 'bench_failed'].includes(t.outcome),
  );
  let draftFile: string | null = null;
  if (crashed.length > 0) {
    try {
      const d = await draftIssue(engine, { ids: crashed.map((t) => t.attemptId!), primary: crashed[0]!.attemptId! });
      draftFile = d.file;
    } catch (e) {
      notes.push(`no upstream draft: ${(e as Error).message}`);
    }
  }
  const status = cancelled ? 'cancelled' : winner ? 'done' : 'failed';
  const report = reportText(run, trials, { ending, winner, profileFile, chartPath, draftFile, kept, notes });
  const result = { ending, winner: winner?.profile ?? null, profileFile, chartPath, draftFile, kept };
  store.finish(run.id, status, engine.clock.now(), result);
  const final = store.get(run.id)!;
  updateView(engine, final, ending);
  engine.notifier?.groupReply(run.groupKey, report);
  if (chartPath)
    engine.notifier?.groupUpload(run.groupKey, {
      filename: `autopilot-${run.id}.png`,
      title: `autopilot run #${run.id}: throughput per trial`,
      content: readFileSync(chartPath).toString('base64'),
      encoding: 'base64',
    });
  return {
    run: final,
    trials,
    ending,
    winner: winner?.profile ?? null,
    profileFile,
    chartPath,
    draftFile,
    report,
  };
}

/** The winner as a profile file that extends the starting profile and names only what differs from it. */
function saveWinner(ctl: Ctl, run: AutopilotRun, winner: string): string {
  const start = resolveProfileName(ctl.engine, run.profile);
  const w = resolveProfileName(ctl.engine, winner);
  const overrides: Record<string, unknown> = {};
  for (const o of bisectUnits(start, w).units.values()) {
    for (const [k, v] of Object.entries(o))
      overrides[k] = k === 'env' ? { ...(overrides.env as object | undefined), ...(v as object) } : v;
  }
  const name = `${run.profile}-autopilot-${run.id}`;
  const dir = variantsDir(ctl.engine);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    variantText({
      base: run.profile,
      overrides,
      name,
      description: `autopilot run #${run.id}: the fastest configuration found under ${sloText(run.params.slo)} at concurrency ${run.params.concurrency}`,
    }),
  );
  return file;
}

/** Output throughput per tune trial (its bench figures), with the SLO's terms drawn on the latency panel. */
async function chart(ctl: Ctl, run: AutopilotRun, trials: Trial[]): Promise<string | null> {
  const bench = createBenchStore(ctl.engine.ledger);
  const levels: LevelMetrics[] = [];
  for (const t of trials) {
    if (t.outcome !== 'measured' || t.attemptId === null) continue;
    const row = bench.list({ attemptId: t.attemptId, limit: 1 })[0];
    const level = row?.levels[0];
    if (level) levels.push({ ...level, concurrency: t.n });
  }
  if (levels.length === 0) return null;
  const png = await renderBenchChart(
    levels,
    `autopilot run #${run.id}: ${run.profile} at concurrency ${run.params.concurrency}`,
    {
      xLabel: 'trial',
      latencyLines: run.params.slo.map((s) => ({ label: `SLO ${s.metric} ${s.ms} ms`, value: s.ms })),
    },
  );
  const dir = join(ctl.engine.loaded.dataDir, 'charts');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `autopilot-run${run.id}.png`);
  writeFileSync(path, png);
  return path;
}

const num = (v: number | null, d = 1) => (v === null ? '-' : v.toFixed(d));

export function trialsTable(trials: Trial[]): string {
  return table(
    ['#', 'phase', 'attempt', 'what changed', 'outcome', 'class', 'out tok/s', 'TTFT p99 ms', 'ITL p50 ms', 'SLO'],
    trials.map((t) => [
      String(t.n),
      t.phase,
      t.attemptId === null ? '-' : `#${t.attemptId}`,
      t.changes.length > 70 ? `${t.changes.slice(0, 67)}...` : t.changes,
      t.outcome,
      t.category ?? '-',
      num(t.throughput),
      num(t.ttftP99, 0),
      num(t.itlP50),
      t.meetsSlo === null ? '-' : t.meetsSlo ? 'met' : 'missed',
    ]),
  );
}

function reportText(
  run: AutopilotRun,
  trials: Trial[],
  r: {
    ending: string;
    winner: Trial | null;
    profileFile: string | null;
    chartPath: string | null;
    draftFile: string | null;
    kept: number | null;
    notes: string[];
  },
): string {
  const base = trials.find((t) => t.phase === 'tune' && t.outcome === 'measured');
  const launches = new Set(trials.map((t) => t.attemptId).filter((id) => id !== null)).size;
  const lines = [
    `autopilot run #${run.id}: ${run.profile} on ${run.host}: ${r.ending}`,
    `  ${launches} launches of ${run.params.attempts}, ${duration((run.endedAt ?? Date.now()) - run.startedAt)}; SLO ${sloText(run.params.slo)} at concurrency ${run.params.concurrency} (in ${run.params.inputLen} / out ${run.params.outputLen})`,
  ];
  if (r.winner) {
    const gain =
      base?.throughput && r.winner.throughput && r.winner !== base
        ? ` (${(((r.winner.throughput - base.throughput) / base.throughput) * 100).toFixed(0)}% over the working configuration's ${base.throughput.toFixed(1)})`
        : '';
    lines.push(
      `  winner: ${r.winner.profile}${r.winner.throughput ? `: ${r.winner.throughput.toFixed(1)} output tok/s${gain}` : ''}`,
    );
    lines.push(r.kept ? `  left running: attempt #${r.kept}` : '  stopped (give --keep to leave the winner running)');
  } else lines.push('  no configuration worked');
  if (r.profileFile) lines.push(`  profile: ${r.profileFile}`);
  const boundaries = trials.filter((t) => t.phase === 'tune' && t.outcome !== 'measured');
  if (boundaries.length)
    lines.push(`  boundaries: ${boundaries.map((t) => `${t.changes} (${t.category ?? t.outcome})`).join('; ')}`);
  if (r.chartPath) lines.push(`  chart: ${r.chartPath}`);
  if (r.draftFile) lines.push(`  upstream draft for the crashes met: ${r.draftFile}`);
  for (const n of r.notes) lines.push(`  note: ${n}`);
  lines.push('', trialsTable(trials));
  return lines.join('\n');
}
