// The bot's config file, as a zod schema: the single source of truth for validation, defaults, types and the
// JSON Schema editors use (schema/config.schema.json).
import { z } from 'zod';
import { pathString as pathStringOf } from '../paths.ts';
import { FindingsSourceSchema } from './findings.ts';
import { CODE_ARGS, CODE_ENV, codePathsAllowed, DEFAULT_OPERATOR_ARGS, DEFAULT_OPERATOR_ENV } from './operator.ts';
import { ScheduleSchema } from './schedule.ts';
import { SlurmClusterSchema } from './slurm.ts';
import { SmokeConfigSchema } from './smoke.ts';

const pathString = pathStringOf(z);

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const safeText = z
  .string()
  .min(1)
  .refine((s) => !/[\0\n\r]/.test(s), 'must not contain NUL or line breaks');

export const SshSchema = z
  .object({
    host: safeText.describe('address, DNS name, or a Host alias from ~/.ssh/config'),
    port: z.number().int().min(1).max(65535).optional().describe('default: from ~/.ssh/config, else 22'),
    user: safeText.optional().describe('default: from ~/.ssh/config, else the local user name'),
    key_file: pathString.optional().describe('private key; default: IdentityFile from ~/.ssh/config'),
    key_passphrase_env: z
      .string()
      .regex(ENV_NAME)
      .optional()
      .describe('name of the environment variable that holds the key passphrase (never the passphrase itself)'),
    agent: z.boolean().default(false).describe('authenticate with the ssh-agent at $SSH_AUTH_SOCK'),
    known_hosts: pathString
      .optional()
      .describe(
        'host keys are pinned from this file; default: UserKnownHostsFile from the ssh config, else ~/.ssh/known_hosts',
      ),
    jump: safeText
      .optional()
      .describe('name of another host in this file to connect through; default: ProxyJump from the ssh config'),
    ssh_config: pathString
      .default('~/.ssh/config')
      .describe(
        'where aliases are looked up (resolved by `ssh -G`: Include, Match, HostName, Port, User, IdentityFile, ProxyJump, UserKnownHostsFile); at the default the system file is read too, as ssh does',
      ),
  })
  .strict();

export const HostSchema = z
  .object({
    description: z.string().optional(),
    ssh: SshSchema.optional().describe('how to reach the host; omit and set local: true for this machine'),
    local: z.boolean().optional().describe('the host is the machine the bot runs on'),
    python: pathString.default('python3').describe('the Python that has SGLang installed'),
    workdir: pathString.default('~/.glm-ops').describe('where run directories, logs and the lock live on the host'),
    env: z
      .record(z.string().regex(ENV_NAME, 'not a valid environment variable name'), safeText)
      .default({})
      .describe('non-secret environment for every launch on this host'),
    env_file: pathString
      .optional()
      .describe('a 0600 file ON THE HOST with KEY=value lines (HF_TOKEN...), sourced at launch; secrets stay there'),
    bin_dirs: z.array(pathString).default([]).describe('directories put first on PATH for launches and checks'),
    flag_dialect: z
      .enum(['auto', 'nsa', 'dsa'])
      .default('auto')
      .describe('NSA flags are called --dsa-* from SGLang 0.5.13; auto picks by the installed version'),
    dist_addr: safeText
      .optional()
      .describe(
        'multi-node launches: the address the other nodes reach this host on (e.g. its cluster network IP); default: ssh.host when it is an IP address',
      ),
    slurm: SlurmClusterSchema.optional().describe(
      'the host is a Slurm login node: servers run as batch jobs (workdir must be on a filesystem the compute nodes share)',
    ),
  })
  .strict();

/** Several hosts serving one model together (SGLang's --nnodes): node 0, the head, first. */
export const HostGroupSchema = z
  .object({
    description: z.string().optional(),
    hosts: z.array(safeText).min(2, 'a group has at least two hosts').describe('node 0 (the head) first'),
    dist_port: z
      .number()
      .int()
      .min(1024)
      .max(65535)
      .optional()
      .describe("--dist-init-addr's port on the head; default: the first free port from 20000, found at launch"),
  })
  .strict();

const SLACK_ID = /^[A-Z][A-Z0-9]{2,}$/;
const slackId = (what: string) => z.string().regex(SLACK_ID, `not a Slack ${what} ID (like U0123ABCD)`);

/** Who may do what from Slack. The terminal is the local user and stays trusted. */
export const RoleSchema = z.enum(['viewer', 'operator', 'admin']);

/** A list of patterns (`*`, `?`, `!` to exclude, as in ssh_config) that must not let a code path through. */
const allowList = (what: string, code: readonly string[], defaults: readonly string[]) =>
  z
    .array(z.string().regex(/^!?[A-Za-z0-9_*?-]+$/, `a ${what} or a pattern with * and ?; ! in front excludes`))
    .default([...defaults])
    .superRefine((list, ctx) => {
      const through = codePathsAllowed(list, code);
      if (through.length > 0)
        ctx.addIssue({
          code: 'custom',
          message: `lets an operator set ${through.join(', ')}, which run${through.length === 1 ? 's' : ''} code of their choosing on the GPU hosts (fix: narrow the patterns or add !${through[0]}; an admin can still set ${through.length === 1 ? 'it' : 'them'})`,
        });
    });

export const OperatorMaySetSchema = z
  .object({
    env: allowList('variable name', CODE_ENV, DEFAULT_OPERATOR_ENV).describe(
      "environment variable names an operator may set or change (SGLang's, NCCL's, CUDA's, PyTorch's, Hugging Face's own by default; never LD_*, PYTHON*, PATH or a plugin loader)",
    ),
    extra_args: allowList('--flag', CODE_ARGS, DEFAULT_OPERATOR_ARGS).describe(
      'SGLang flags an operator may add to extra_args (scheduling, parallelism, memory, logging by default; never a flag that picks the model, a code path or remote code)',
    ),
  })
  .strict();

export const AccessSchema = z
  .object({
    users: z
      .record(slackId('user'), RoleSchema)
      .default({})
      .describe(
        'Slack user IDs (U...) and their role: viewer looks, operator launches and stops (within operator_may_set), admin also audits and may set anything',
      ),
    groups: z
      .record(slackId('user group'), RoleSchema)
      .default({})
      .describe('Slack user group IDs (S...) and the role their members get (usergroups.users.list, cached)'),
    channels: z
      .array(slackId('channel'))
      .default([])
      .describe('channel IDs where /glm is accepted; everywhere else is refused'),
    default_role: z
      .enum(['none', 'viewer'])
      .default('none')
      .describe('role of anyone not listed, in an allowed channel; never more than viewer'),
    group_cache_s: z.number().positive().default(300).describe('how long user group members are cached'),
    operator_may_set: OperatorMaySetSchema.default({
      env: [...DEFAULT_OPERATOR_ENV],
      extra_args: [...DEFAULT_OPERATOR_ARGS],
    }).describe(
      "what an operator may set from Slack beyond a profile file's own settings (--set, next:N, variants); anything else needs an admin",
    ),
  })
  .strict();

export const SlackSchema = z
  .object({
    channel: slackId('channel').describe(
      'where attempt messages and crash alerts are posted (the bot must be a member)',
    ),
    team_id: slackId('team')
      .optional()
      .describe('accept requests from this workspace only (recommended when the app is installed in several)'),
    port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .default(3000)
      .describe('HTTP port: /slack/events (HTTP mode) and /healthz (both modes)'),
    update_interval_s: z
      .number()
      .nonnegative()
      .default(3)
      .describe('at most one chat.update per message this often (chat.update is Tier 3)'),
    timeout_s: z.number().positive().default(10).describe('Slack Web API request timeout'),
  })
  .strict();

/** Upstream issue drafts: where new-issue links point and, with a token, where duplicates are searched. */
export const GithubSchema = z
  .object({
    repo: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'owner/name, like sgl-project/sglang')
      .default('sgl-project/sglang')
      .describe('the upstream repository issue drafts are written for'),
    token_env: z
      .string()
      .regex(ENV_NAME)
      .optional()
      .describe(
        'name of the environment variable holding a GitHub token (never the token itself); set it to search upstream issues',
      ),
    api_url: z.url().default('https://api.github.com').describe('GitHub REST API base (GitHub Enterprise: .../api/v3)'),
    web_url: z.url().default('https://github.com').describe('where new-issue links point'),
    max_url_length: z
      .number()
      .int()
      .min(500)
      .default(8000)
      .describe('longest prefilled new-issue link offered; a longer draft is given as a file only'),
  })
  .strict();

export const ConfigSchema = z
  .object({
    default_host: safeText.optional().describe('host used when a command names none; default: the only host'),
    data_dir: pathString.optional().describe('where the ledger lives; default: $XDG_DATA_HOME/glm-ops'),
    profiles_dir: pathString.optional().describe("launch profiles; default: the package's profiles/"),
    templates_dir: pathString
      .optional()
      .describe("issue-draft templates (issue-title.txt, issue-body.md); default: the package's templates/"),
    timeouts: z
      .object({
        connect_s: z.number().positive().default(10),
        command_s: z.number().positive().default(30),
        keepalive_s: z.number().positive().default(15),
        ready_s: z.number().positive().default(1800).describe('give up waiting for a launch after this long'),
        stop_grace_s: z.number().nonnegative().default(30).describe('SIGTERM, then SIGKILL after this long'),
        stall_s: z
          .number()
          .positive()
          .optional()
          .describe('report a hang after this long without progress in a startup phase; default: per phase, 10-20 min'),
      })
      .strict()
      .default({ connect_s: 10, command_s: 30, keepalive_s: 15, ready_s: 1800, stop_grace_s: 30 }),
    hosts: z.record(z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/i, 'host names: letters, digits, . _ -'), HostSchema),
    host_groups: z
      .record(z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/i, 'group names: letters, digits, . _ -'), HostGroupSchema)
      .default({})
      .describe('named groups of hosts for multi-node launches (launch P --host GROUP)'),
    findings: z
      .array(FindingsSourceSchema)
      .default([])
      .describe("the team's Markdown knowledge bases quoted in crash alerts; default: the example in knowledge/"),
    signatures: z
      .array(z.unknown())
      .default([])
      .describe('extra crash signatures for the classifier (same shape as catalog/signatures.yaml entries)'),
    slack: SlackSchema.optional().describe('the Slack face; tokens come from the environment, never from this file'),
    access: AccessSchema.optional().describe('Slack roles and channels; without it nobody may use /glm'),
    github: GithubSchema.optional().describe('upstream issue drafts: repository, links, and the token for searching'),
    smoke: SmokeConfigSchema.optional().describe(
      'smoke checks: regression threshold, launch-mode time budget, prompts added to the default set',
    ),
    schedule: ScheduleSchema.optional().describe('scheduled commands (nightly smoke, benchmarks) and their catch-up'),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;
export type HostConfig = z.infer<typeof HostSchema>;
export type SshConfig = z.infer<typeof SshSchema>;
export type SlackConfig = z.infer<typeof SlackSchema>;
export type AccessConfig = z.infer<typeof AccessSchema>;
export type OperatorMaySet = z.infer<typeof OperatorMaySetSchema>;
export type GithubConfig = z.infer<typeof GithubSchema>;
export type Role = z.infer<typeof RoleSchema>;
