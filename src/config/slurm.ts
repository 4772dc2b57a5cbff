// A Slurm cluster as a host: the bot reaches a login node (over SSH, or local on it) and runs servers as batch jobs.
// The same options can be set per cluster (hosts.NAME.slurm) and per profile (profile slurm:), the profile winning.
// Every value ends up on an `#SBATCH` line of a script, so each is checked here for the characters Slurm accepts.
import { z } from 'zod';

const word = (what: string, re = /^[A-Za-z0-9_.+%@-]+$/) =>
  z.string().min(1).regex(re, `not a valid ${what} (letters, digits and _ . + % @ - only)`);

/** The options a profile may set for its job (and a cluster as its default). */
export const SlurmJobSchema = z
  .object({
    partition: word('partition name').describe('sbatch --partition'),
    account: word('account name').describe('sbatch --account'),
    qos: word('QOS name').describe('sbatch --qos'),
    time_limit: z
      .string()
      .regex(
        /^(\d+-)?\d+(:\d{1,2}){0,2}$|^\d+-\d+$/,
        'a Slurm time: minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS',
      )
      .describe('sbatch --time: the job is ended by Slurm (TIMEOUT) after this long'),
    constraint: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9_.:,&|()[\]*!-]+$/, 'not a valid Slurm feature expression (like h100&ib)')
      .describe('sbatch --constraint: node features'),
    nodes: z.int().min(1).max(64).describe('nodes for one server (tp is split evenly across them); default 1'),
    gpus_as: z
      .enum(['gres', 'gpus-per-node'])
      .describe('how GPUs are asked for: --gres=gpu:N (default) or --gpus-per-node=N, N = tp / nodes'),
    requeue: z
      .boolean()
      .describe(
        'let Slurm requeue the job after a node failure or a preemption (sbatch --requeue; default false: --no-requeue, the attempt ends with that outcome)',
      ),
    sbatch: z
      .array(
        z
          .string()
          .regex(/^--?[A-Za-z][^\0\n\r]*$/, "an sbatch option on one line, like '--mem=0' or '--exclusive'")
          // The bot must know whether Slurm may requeue the job (it follows a requeued job back through the queue).
          .refine((s) => !/^--(no-)?requeue(=|\s|$)/.test(s), {
            message: 'requeueing is set with slurm.requeue: true (or false), not with an sbatch line',
          }),
      )
      .describe('extra #SBATCH lines (options only); a profile adds its own after the cluster’s'),
  })
  .partial()
  .strict();

export const SlurmClusterSchema = SlurmJobSchema.extend({
  slurm_conf: z
    .string()
    .min(1)
    .regex(/^[^\0\n\r]+$/)
    .optional()
    .describe('SLURM_CONF for the Slurm commands on the login node (default: the login node’s own)'),
  dist_port: z.int().min(1024).max(65535).default(29500).describe("multi-node jobs: --dist-init-addr's port on node 0"),
}).strict();

export type SlurmJob = z.infer<typeof SlurmJobSchema>;
export type SlurmCluster = z.infer<typeof SlurmClusterSchema>;

/** The cluster's options with a profile's on top; the profile's extra lines come after the cluster's. */
export function jobOptions(cluster: SlurmCluster, profile: SlurmJob | undefined): SlurmCluster {
  const p = profile ?? {};
  return { ...cluster, ...p, sbatch: [...(cluster.sbatch ?? []), ...(p.sbatch ?? [])] };
}
