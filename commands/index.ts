// Part commands: owns one file per chat command: its definition, with the work imported when it runs.
// May import: advice, autopilot, bench-load, charts, config, corpus, errors-render.ts, errors.ts, findings, fleet,
//   format, hosts, lifecycle, logs, paths.ts, profiles, redact.ts, reports, runtime, schedule, smoke.
//
// Every chat command, one file each. test/commands/registry.test.ts checks this list matches the folder.
// Each file is light: its definition only, with the code that does the work imported by its run() when the command
// runs (a one-shot `glm help` loads none of it). Each declares `const command = defineCommand(...)` and then exports
// it: TypeScript 5.9 does not rewrite the `.ts` of a dynamic import inside `export default <call>`, and dist/ would
// import files that do not exist there (test/cli/startup.test.ts checks dist/).
import type { CommandDef } from '../src/runtime/define.ts';
import attempts from './attempts.ts';
import audit from './audit.ts';
import autopilot from './autopilot.ts';
import bench from './bench.ts';
import bisect from './bisect.ts';
import check from './check.ts';
import classify from './classify.ts';
import diff from './diff.ts';
import draftIssue from './draft-issue.ts';
import findings from './findings.ts';
import help from './help.ts';
import launch from './launch.ts';
import logs from './logs.ts';
import next from './next.ts';
import probe from './probe.ts';
import profile from './profile.ts';
import profiles from './profiles.ts';
import schedule from './schedule.ts';
import smoke from './smoke.ts';
import status from './status.ts';
import stop from './stop.ts';

export const COMMANDS = [
  help,
  launch,
  stop,
  probe,
  status,
  logs,
  attempts,
  profiles,
  profile,
  diff,
  findings,
  bisect,
  autopilot,
  classify,
  next,
  draftIssue,
  check,
  audit,
  smoke,
  bench,
  schedule,
] as unknown as CommandDef[];
