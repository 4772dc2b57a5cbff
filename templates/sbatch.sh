#!/bin/sh
{{! The batch script of a launch on a Slurm cluster: src/lifecycle/slurm/script.ts fills it, `launch --dry-run` prints }}
{{! it exactly as it is submitted. Every value is quoted (or checked for plain characters) by the renderer. }}
#SBATCH --nodes={{nodes}}
#SBATCH --ntasks-per-node=1
{{! Not requeued unless the profile or cluster sets slurm.requeue: a node failure or a preemption ends the attempt }}
{{! (and says so). Requeued, the same job starts again later on other nodes: the bot says so and follows it again. }}
{{! sbatch is given the same word on its command line, where the login node's SBATCH_REQUEUE cannot override it. }}
#SBATCH {{requeue}}
#SBATCH {{gpus}}
{{#partition}}
#SBATCH --partition={{partition}}
{{/partition}}
{{#account}}
#SBATCH --account={{account}}
{{/account}}
{{#qos}}
#SBATCH --qos={{qos}}
{{/qos}}
{{#time_limit}}
#SBATCH --time={{time_limit}}
{{/time_limit}}
{{#constraint}}
#SBATCH --constraint={{constraint}}
{{/constraint}}
{{#extra}}
#SBATCH {{.}}
{{/extra}}
# glm-ops: profile {{profile}}

# The server's environment: the cluster's and the profile's settings (nothing secret is written here); secrets are
# read on the compute node from the cluster's env file.
{{#env}}
export {{.}}
{{/env}}
{{#path}}
PATH={{path}}:$PATH; export PATH
{{/path}}
{{#env_file}}
if [ -r {{env_file}} ]; then set -a; . {{env_file}}; set +a; else echo "glm: the cluster's env_file is not readable" >&2; fi
{{/env_file}}
echo "glm: job $SLURM_JOB_ID on $SLURM_JOB_NODELIST"
{{#multi}}
# Node 0 hosts the rendezvous store; every node meets there.
head=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)
head_addr=$(scontrol show node -o "$head" | tr ' ' '\n' | sed -n 's/^NodeAddr=//p')
GLM_DIST_INIT_ADDR=${head_addr:-$head}:{{dist_port}}; export GLM_DIST_INIT_ADDR
{{/multi}}
# One task per node, each node's output in its own file in the run directory (node0.log is node 0's).
srun --nodes={{nodes}} --ntasks-per-node=1 --kill-on-bad-exit=1 --output=node%n.log {{launch}}
