// `/glm <command> [args]`: the terminal's commands and syntax. The ack goes back at once (Slack allows 3 s) with a
// "working on it" line; authorisation, SSH and everything slow happen after it, and the answer replaces that line.
import type { SlackCommandMiddlewareArgs } from '@slack/bolt';
import { resolveLaunchProfile } from '../advice/profiles.ts';
import { resolveLaunchHosts } from '../config/hosts.ts';
import { UserError } from '../errors.ts';
import { describeError } from '../errors-render.ts';
import type { Attempt } from '../ledger/attempts.ts';
import { checkLaunch } from '../lifecycle/launch/check.ts';
import { clashingAttempt } from '../lifecycle/leases.ts';
import type { Identity } from '../runtime/define.ts';
import { authorize, type Parsed } from '../runtime/registry.ts';
import { auditClick, commandDef, type FaceDeps, reply, slackContext } from './face-deps.ts';
import { esc, normalizeCommandText } from './mrkdwn.ts';
import { replaceBlocks } from './views.ts';

/** The ack: the command as typed, and for a launch that will run, where its progress goes. */
export function ackText(text: string, channel: string, parsed?: Parsed): string {
  const where = parsed?.def.name === 'launch' && !parsed.args.dryRun ? `: progress in <#${channel}>` : '';
  return `:hourglass_flowing_sand: \`/glm ${esc(text || 'help')}\`${where}`;
}

/** The text read by the registry's own parser, or undefined where it is wrong (the run reports why, audited). */
function parsedOf(deps: FaceDeps, text: string): Parsed | undefined {
  try {
    return deps.glm.dispatch.parse(text || 'help');
  } catch {
    return undefined;
  }
}

const afterIo = () => new Promise<void>((resolve) => setImmediate(resolve));

export function onSlashCommand(deps: FaceDeps) {
  return async ({ command, ack }: SlackCommandMiddlewareArgs): Promise<void> => {
    const text = normalizeCommandText(command.text ?? '');
    await ack({ response_type: 'ephemeral', text: ackText(text, deps.channel, parsedOf(deps, text)) });
    const identity: Identity = {
      user: command.user_id,
      team: command.team_id,
      channel: command.channel_id,
      via: 'command',
    };
    // After the ack, and after any other requests that arrived with this one have been acked too (setImmediate runs
    // once the pending I/O is handled): under a burst, acks first, work second.
    deps.track(afterIo().then(() => runCommand(deps, identity, text, command.response_url)));
  };
}

export async function runCommand(deps: FaceDeps, identity: Identity, text: string, responseUrl?: string) {
  const parsed = parsedOf(deps, text);
  if (parsed?.def.name === 'launch' && (await askToReplace(deps, identity, parsed, text, responseUrl))) return;
  const out = await deps.glm.dispatch.run(text || 'help', slackContext(deps, identity));
  const name = parsed?.def.name ?? 'help';
  reply(deps, identity, responseUrl, { text: out.text, filename: `glm-${name}.txt` }, true);
}

/**
 * The server a `/glm launch ...` would run into (its port, or GPUs it needs on its head host), if any. A launch that
 * fits beside what runs there (other GPUs, another port) clashes with nothing.
 */
export async function launchClash(
  deps: FaceDeps,
  identity: Identity,
  text: string,
): Promise<{ host: string; args: Record<string, unknown>; running?: Attempt } | null> {
  const def = commandDef(deps, 'launch');
  const engine = deps.glm.engine;
  // The asker's role decides which changes the profile may carry (and whether a variant file may be written).
  const decision = await authorize(def, slackContext(deps, identity));
  if (!decision.allow) return null;
  try {
    const { def: parsedDef, args } = deps.glm.dispatch.parse(text);
    if (parsedDef !== def) return null;
    const host = resolveLaunchHosts(engine.loaded, args.host as string | undefined).hosts[0]!;
    const profile = resolveLaunchProfile(
      engine,
      String(args.profile),
      args.set as string | undefined,
      decision.role ?? 'viewer',
    );
    const gpus = args.gpus ? String(args.gpus).split(',').map(Number) : profile.gpus;
    const running = await clashingAttempt(engine, host, {
      port: (args.port as number | undefined) ?? profile.port,
      count: gpus?.length ?? profile.tp ?? 1,
      gpus,
    });
    return { host, args, running };
  } catch {
    return null; // the registry explains the mistake
  }
}

/**
 * Why `/glm launch ...` would be refused if `replacing` were not running (a configuration known to crash here, an
 * unreachable host, a bad argument, a clash with another server), or null when it would go: asked before that
 * server is stopped.
 */
export async function launchRefusal(
  deps: FaceDeps,
  identity: Identity,
  text: string,
  replacing: number,
): Promise<string | null> {
  const def = commandDef(deps, 'launch');
  const engine = deps.glm.engine;
  // The asker's role decides which changes the profile may carry, as it does for the launch itself.
  const decision = await authorize(def, slackContext(deps, identity));
  if (!decision.allow) return `${decision.reason}${decision.hint ? ` (${decision.hint})` : ''}`;
  const role = decision.role ?? 'viewer';
  try {
    const { def: parsedDef, args } = deps.glm.dispatch.parse(text);
    if (parsedDef !== def) throw new UserError(`not a launch: ${text}`);
    const profile = resolveLaunchProfile(engine, String(args.profile), args.set as string | undefined, role);
    // As `launch` picks them: --host, else the profile's own host or group, else the default host.
    const hosts = resolveLaunchHosts(engine.loaded, (args.host as string | undefined) ?? profile.host).hosts;
    await checkLaunch(
      engine,
      {
        profile,
        hostName: hosts[0]!,
        nodes: hosts,
        actor: 'check',
        origin: 'slack',
        role,
        port: args.port as number | undefined,
        gpus: args.gpus ? String(args.gpus).split(',').map(Number) : undefined,
        confirmed: Boolean(args.yes),
      },
      replacing,
    );
    return null;
  } catch (e) {
    return describeError(e, deps.log, { origin: 'slack', longLived: true });
  }
}

/**
 * A launch that would run into a server (same port, or GPUs it needs): instead of refusing, name what would be
 * replaced and ask. Only for someone allowed to launch (everyone else goes on to the registry, which refuses and
 * audits).
 */
async function askToReplace(
  deps: FaceDeps,
  identity: Identity,
  parsed: Parsed,
  text: string,
  responseUrl: string | undefined,
): Promise<boolean> {
  const def = parsed.def;
  if (parsed.args.dryRun) return false;
  // Permission first: for someone refused, nothing touches the disk (variants), the ledger or a host; the registry
  // writes the one audit row.
  if (!(await authorize(def, slackContext(deps, identity))).allow) return false;
  const clash = await launchClash(deps, identity, text);
  if (!clash?.running || clash.args.dryRun) return false;
  const { host, args, running } = clash;
  const id = deps.pending.add({ text, identity, responseUrl, host, replaces: running.id });
  const now = deps.glm.engine.clock.now();
  reply(
    deps,
    identity,
    responseUrl,
    {
      text: `${host} already runs attempt #${running.id} (${running.profile}), launched by ${running.actor}: replace it?`,
      blocks: replaceBlocks(running, String(args.profile), id, now),
    },
    true,
  );
  auditClick(deps, identity, 'launch', args, 'allow', `asked to confirm replacing attempt #${running.id}`);
  return true;
}
