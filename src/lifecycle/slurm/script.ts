// The sbatch script of a launch, rendered from templates/sbatch.sh. The script is data sent on sbatch's stdin, never
// a command line; every value in it is either checked for plain characters by the config schema (the #SBATCH lines)
// or quoted once here with the hosts' quoting (the shell lines), so no user text is parsed by a shell.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostConfig } from '../../config/schema.ts';
import { jobOptions, type SlurmCluster } from '../../config/slurm.ts';
import { UserError } from '../../errors.ts';
import { shArgv, shq, shqPath } from '../../hosts/quote.ts';
import type { ResolvedProfile } from '../../profiles/index.ts';
import { isSecretName, redactArgv, redactText } from '../../redact.ts';
import {
  checkTemplate,
  PACKAGE_TEMPLATES,
  parseTemplate,
  renderTemplate,
  type Template,
  type VarSchema,
} from '../../templates/template.ts';

export const SBATCH_FILE = 'sbatch.sh';

const VARIABLES: VarSchema = {
  nodes: 'text',
  requeue: 'text',
  gpus: 'text',
  partition: 'text',
  account: 'text',
  qos: 'text',
  time_limit: 'text',
  constraint: 'text',
  extra: { list: 'text' },
  profile: 'text',
  env: { list: 'text' },
  path: 'text',
  env_file: 'text',
  multi: 'flag',
  dist_port: 'text',
  launch: 'text',
};

let template: Template | undefined;
function load(): Template {
  if (template) return template;
  const path = join(PACKAGE_TEMPLATES, SBATCH_FILE);
  const t = parseTemplate(readFileSync(path, 'utf8'), path);
  checkTemplate(t, VARIABLES);
  template = t;
  return t;
}

export interface JobPlan {
  options: SlurmCluster;
  nodes: number;
  gpusPerNode: number;
  /** sbatch's requeue word for this job (`--requeue` or `--no-requeue`), in the script and on sbatch's command line. */
  requeue: '--requeue' | '--no-requeue';
  script: string;
}

export function renderJob(
  cfg: HostConfig,
  profile: ResolvedProfile,
  server: { argv: string[]; env: Record<string, string> },
): JobPlan {
  // The script is kept by Slurm (and shown by `scontrol write batch_script`): nothing secret may be written into it.
  const secret = [
    ...Object.entries(server.env)
      .filter(([k, v]) => isSecretName(k) || redactText(v) !== v)
      .map(([k]) => `the environment variable ${k}`),
    ...(redactArgv(server.argv).some((a, i) => a !== server.argv[i]) ? ['a secret in the server arguments'] : []),
  ];
  if (secret.length > 0) {
    throw new UserError(
      `${secret.join(' and ')} would be written into the job's batch script, which Slurm keeps and shows`,
      "put secrets in the cluster's env_file (on the cluster, mode 0600): the job sources it on the compute node",
    );
  }
  const options = jobOptions(cfg.slurm!, profile.slurm);
  const nodes = options.nodes ?? 1;
  const tp = profile.tp ?? 1;
  if (tp % nodes !== 0) {
    throw new UserError(
      `tp ${tp} does not split evenly across ${nodes} nodes`,
      'set slurm.nodes in the profile to a divisor of tp (GPUs per node = tp / nodes)',
    );
  }
  const gpusPerNode = tp / nodes;
  const gpus = options.gpus_as === 'gpus-per-node' ? `--gpus-per-node=${gpusPerNode}` : `--gres=gpu:${gpusPerNode}`;
  const requeue = options.requeue ? '--requeue' : '--no-requeue';
  const multi = nodes > 1;
  // Each node task's first line in its log names its run (srun's SLURM_RESTART_COUNT, unset before any requeue, and
  // the time), so a rerun that truncates its log is told from the run before even when it prints the same bytes
  // (scripts.ts LOG_MARKS). Fixed text and Slurm's own variables only; the server's argv follows as "$@".
  const header = `echo "glm-ops: run \${SLURM_RESTART_COUNT:-0} of job $SLURM_JOB_ID on $SLURMD_NODENAME at $(date -u +%Y-%m-%dT%H:%M:%SZ)"`;
  // Multi-node: each task adds its own rank (srun's SLURM_NODEID) and node 0's address, found inside the job.
  const rest = multi ? ` --nnodes ${nodes} --node-rank "$SLURM_NODEID" --dist-init-addr "$GLM_DIST_INIT_ADDR"` : '';
  const launch = `sh -c ${shq(`${header}; exec "$@"${rest}`)} glm-node ${shArgv(server.argv)}`;
  const script = renderTemplate(load(), {
    nodes: String(nodes),
    requeue,
    gpus,
    partition: options.partition ?? '',
    account: options.account ?? '',
    qos: options.qos ?? '',
    time_limit: options.time_limit ?? '',
    constraint: options.constraint ?? '',
    extra: options.sbatch ?? [],
    profile: profile.name,
    env: Object.entries(server.env).map(([k, v]) => `${k}=${shq(v)}`),
    path: cfg.bin_dirs.map(shqPath).join(':'),
    env_file: cfg.env_file ? shqPath(cfg.env_file) : '',
    multi,
    dist_port: String(options.dist_port),
    launch,
  });
  return { options, nodes, gpusPerNode, requeue, script };
}
