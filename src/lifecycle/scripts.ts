// The POSIX sh programs the bot runs on a host. They are constant text: every value (paths, run ids, the server's
// argv) arrives as a positional parameter, quoted once by the host's exec, so no user text is ever parsed by a shell.
// They run under dash as well as bash (`kill -SIG -PGID`, no `--`), and need util-linux setsid/flock and procps ps.

import { HOME_PATH_SH } from '../hosts/quote.ts';

const PRELUDE = `
set -u
${HOME_PATH_SH}
# alive PGID START: the group leader is the very process we started (same start time: no PID reuse) and not a zombie.
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  set -- "$2" \${s##*) }
  [ "$2" != Z ] && [ "$2" != X ] && [ "\${21}" = "$1" ]
}
# group_alive PGID: some member of the process group is still running (zombies do not count).
group_alive() { ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { n++ } END { exit n ? 0 : 1 }'; }
start_time() { s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; set -- \${s##*) }; printf %s "\${20}"; }
`;

/**
 * launch WORKDIR RUN_ID ENV_FILE PATH_PREPEND GPUS NEEDS -- ARGV...   (stdin: `E NAME='v'` and `S NAME='v'` lines)
 * Refuses (GLM_RUNNING) while a live server started by any bot on this host holds one of GPUS (comma list; empty means
 * "unknown", which clashes with everything): the host's own last line of defence behind the ledger's leases.
 * The server's environment never travels on a command line: E lines become the run's env file, S lines (secrets) are
 * merged into the host's secrets file (WORKDIR/secrets.env, mode 0600); NEEDS (space-separated names) are the
 * secrets the server gets from there, refused with GLM_NO_SECRET when the host does not have them.
 */
export const LAUNCH = `${PRELUDE}
set -e
W=$(home_path "$1"); RUN=$2; ENVF=$(home_path "$3"); PP=$4; GPUS=$5; NEEDS=$6; shift 6
[ "\${1-}" = "--" ] && shift
for n in $NEEDS; do case $n in *[!A-Za-z0-9_]*) echo "GLM_BAD_NAME $n"; exit 2 ;; esac; done
SEC=$W/secrets.env
if [ -n "$PP" ]; then PATH=$PP:$PATH; export PATH; fi
mkdir -p "$W/runs" "$W/live"
exec 9>>"$W/host.lock"
flock -w 10 9 || { echo "GLM_BUSY"; exit 75; }
clash() {
  if [ -z "$1" ] || [ -z "$2" ]; then return 0; fi
  for g in $(printf %s "$1" | tr , ' '); do case ",$2," in *",$g,"*) return 0 ;; esac; done
  return 1
}
# One record per live server (live/RUN: pgid, start time, run, GPUs); \`current\` is the record of bots before
# leases, which ran one server per host.
for f in "$W/current" "$W"/live/*; do
  [ -s "$f" ] || continue
  pg=; st=; run=; gp=
  read -r pg st run gp < "$f" || true
  if alive "$pg" "$st" || group_alive "$pg"; then
    if clash "$GPUS" "$gp"; then echo "GLM_RUNNING $pg $run \${gp:-all}"; exit 3; fi
  else
    rm -f "$f"
  fi
done
R=$W/runs/$RUN
# Run ids carry the ledger's id: a directory already there is another bot's run (a copied ledger?), never reused.
if [ -e "$R" ]; then echo "GLM_RUN_EXISTS $R"; exit 4; fi
mkdir "$R"
: > "$R/out.log"
# Read with shell builtins only (read, printf): no value is ever an argument of a program.
(
  umask 077
  : > "$R/env"; : > "$W/secrets.in"
  while IFS= read -r l || [ -n "$l" ]; do
    case $l in
      "E "*) printf '%s\\n' "\${l#E }" >> "$R/env" ;;
      "S "*) printf '%s\\n' "\${l#S }" >> "$W/secrets.in" ;;
    esac
  done
  if [ -s "$W/secrets.in" ]; then
    [ -f "$SEC" ] || : > "$SEC"
    awk 'NR == FNR { sub(/=.*/, ""); n[$0] = 1; next } { k = $0; sub(/=.*/, "", k); if (!(k in n)) print }' "$W/secrets.in" "$SEC" > "$SEC.tmp"
    cat "$W/secrets.in" >> "$SEC.tmp"
    mv -f "$SEC.tmp" "$SEC"
  fi
  rm -f "$W/secrets.in"
  [ -f "$SEC" ] && chmod 600 "$SEC"
  true
)
if [ -n "$NEEDS" ]; then
  missing=$(
    set +u
    if [ -n "$ENVF" ] && [ -r "$ENVF" ]; then . "$ENVF" >/dev/null 2>&1 || true; fi
    if [ -r "$SEC" ]; then . "$SEC"; fi
    for n in $NEEDS; do eval "v=\\\${$n+x}"; [ -n "$v" ] || printf '%s ' "$n"; done
  )
  if [ -n "$missing" ]; then rm -rf "$R"; echo "GLM_NO_SECRET $missing"; exit 4; fi
fi
# The wrapper leads a new session (setsid does not fork: a background job of a non-interactive shell is no group
# leader, so $! is the PGID). It traps TERM so it outlives the server and records its exit status; the server itself
# gets default signal handling. All stdio goes to the log so the SSH channel can close; fd 9 (the lock) is not inherited.
setsid sh -c '
R=$1; ENVF=$2; SEC=$3; NEEDS=$4; shift 4
trap ":" TERM INT HUP
if [ -n "$ENVF" ]; then
  if [ -r "$ENVF" ]; then set -a; . "$ENVF"; set +a; else echo "glm: env_file $ENVF is not readable" >&2; fi
fi
set -a; . "$R/env"; set +a
# Only the secrets this server needs, exported from the host file (one NAME=value line each, quoted by the bot).
if [ -n "$NEEDS" ] && [ -r "$SEC" ]; then
  while IFS= read -r l; do
    k=\${l%%=*}
    case " $NEEDS " in *" $k "*) eval "export $l" ;; esac
  done < "$SEC"
fi
"$@"
rc=$?
echo "$rc" > "$R/exit.tmp" && mv -f "$R/exit.tmp" "$R/exit"
' glm-server "$R" "$ENVF" "$SEC" "$NEEDS" "$@" </dev/null >>"$R/out.log" 2>&1 9>&- &
pg=$!
st=$(start_time "$pg")
printf '%s %s\\n' "$pg" "$st" > "$R/pgid"
printf '%s %s %s %s\\n' "$pg" "$st" "$RUN" "$GPUS" > "$W/live/$RUN.tmp"
mv -f "$W/live/$RUN.tmp" "$W/live/$RUN"
echo "GLM_STARTED $pg $st $R"
`;

/** secret-value WORKDIR NAME: one value of the host's secrets file (for the bot's own requests to its server). */
export const SECRET_VALUE = `
${HOME_PATH_SH}
W=$(home_path "$1")
[ -r "$W/secrets.env" ] || exit 1
( set -a; . "$W/secrets.env"; printenv "$2" ) | tr -d '\\n'
`;

/** status WORKDIR RUN_ID: the state of one run, from the host's own record of it. */
export const STATUS = `${PRELUDE}
W=$(home_path "$1"); RUN=$2; R=$W/runs/$RUN
[ -s "$R/pgid" ] || { echo "GLM_NONE"; exit 0; }
read -r pg st < "$R/pgid" || { echo "GLM_NONE"; exit 0; }
ex=$(cat "$R/exit" 2>/dev/null || echo -)
up=$(ps -o etimes= -p "$pg" 2>/dev/null | tr -d ' ' || true)
# The run directory comes last (a path may hold spaces): a bot that lost track of a launch adopts it from here.
if alive "$pg" "$st"; then echo "GLM_ALIVE $pg $st $RUN $ex \${up:--} $R"
elif group_alive "$pg" && ! [ -r "/proc/$pg/stat" ]; then echo "GLM_ORPHANS $pg $st $RUN $ex - $R"
else echo "GLM_DEAD $pg $st $RUN $ex - $R"; fi
`;

/** stop WORKDIR GRACE_DECISECONDS RUN_ID: TERM the run's group, wait, KILL what remains. Nothing else is signalled. */
export const STOP = `${PRELUDE}
W=$(home_path "$1"); GRACE=$2; RUN=$3; R=$W/runs/$RUN
exec 9>>"$W/host.lock" 2>/dev/null || { echo "GLM_NOT_RUNNING"; exit 0; }
flock -w 60 9 || { echo "GLM_BUSY"; exit 75; }
[ -s "$R/pgid" ] || { echo "GLM_NOT_RUNNING"; exit 0; }
read -r pg st < "$R/pgid" || { echo "GLM_NOT_RUNNING"; exit 0; }
# A leader PID that exists with another start time was reused: our group is gone (the kernel does not reuse a PID
# while it still names a process group), so there is nothing of ours to signal.
if [ -r "/proc/$pg/stat" ] && ! alive "$pg" "$st"; then rm -f "$W/live/$RUN"; echo "GLM_NOT_RUNNING"; exit 0; fi
if ! group_alive "$pg"; then rm -f "$W/live/$RUN"; echo "GLM_NOT_RUNNING $(cat "$R/exit" 2>/dev/null || echo -)"; exit 0; fi
kill -TERM "-$pg" 2>/dev/null || true
i=0
while group_alive "$pg" && [ "$i" -lt "$GRACE" ]; do sleep 0.1; i=$((i + 1)); done
how=TERM
if group_alive "$pg"; then
  how=KILL
  kill -KILL "-$pg" 2>/dev/null || true
  j=0
  while group_alive "$pg" && [ "$j" -lt 50 ]; do sleep 0.1; j=$((j + 1)); done
fi
if group_alive "$pg"; then echo "GLM_STUCK $pg"; exit 1; fi
rm -f "$W/live/$RUN"
echo "GLM_STOPPED $how $pg $RUN $(cat "$R/exit" 2>/dev/null || echo -)"
`;

/** free-port START: the first TCP port from START that nothing listens on (IPv4 or IPv6), from /proc/net/tcp*. */
export const FREE_PORT = `
p=$1
used=$(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A" { split($2, a, ":"); print a[2] }')
while [ "$p" -lt 65535 ]; do
  hex=$(printf '%04X' "$p")
  case " $(printf '%s ' $used) " in *" $hex "*) p=$((p + 1)) ;; *) echo "$p"; exit 0 ;; esac
done
exit 1
`;

/**
 * follow LOG OFFSET PGID START: the log from byte OFFSET as it grows (tail -F survives rotation), ending once the
 * server is gone. The liveness loop runs on the host, so the bot holds one quiet stream instead of polling over SSH.
 */
export const FOLLOW = `${PRELUDE}
LOG=$(home_path "$1"); OFF=$2; PG=$3; ST=$4
# tail's own notices (truncation, rotation) come through on the stream: the bot resets its byte offset on them.
tail -c "+$((OFF + 1))" -F -- "$LOG" 2>&1 &
t=$!
trap 'kill "$t" 2>/dev/null; exit 0' TERM HUP INT
while alive "$PG" "$ST"; do sleep 0.2; done
sleep 0.5
kill "$t" 2>/dev/null
wait "$t" 2>/dev/null
exit 0
`;

/**
 * log-marks AT LOG...: for each log, `SIZE MARK`, MARK checksums (cksum) of the log's first line and of the 64 bytes
 * before byte AT (empty AT: the log's end), `-` when the log is shorter than AT. Taken where a requeued job's run ended
 * and again before its next run is read: the same mark means the log was appended to, another that it was truncated
 * and written anew (Slurm's --open-mode, sbatch(1) and srun(1); JobFileAppend in slurm.conf(5)). The first line is the
 * run's own header (slurm/script.ts), so a truncated rerun that prints the same bytes as the run before still differs.
 */
export const LOG_MARKS = `
${HOME_PATH_SH}
at=$1; shift
for f; do
  p=$(home_path "$f")
  s=$(wc -c < "$p" 2>/dev/null) || s=0
  s=$((\${s:-0} + 0)); a=\${at:-$s}
  if [ "$s" -lt "$a" ]; then echo "$s -"; else echo "$s $(head -n 1 -- "$p" 2>/dev/null | cksum | tr ' ' :)/$(head -c "$a" -- "$p" 2>/dev/null | tail -c 64 | cksum | tr ' ' :)"; fi
done
`;

/** read LOG OFFSET: the log from byte OFFSET to its current end. */
export const READ_FROM = `
${HOME_PATH_SH}
LOG=$(home_path "$1")
tail -c "+$(($2 + 1))" -- "$LOG" 2>/dev/null || true
`;

/** read-range LOG START LEN: LEN bytes of the log from byte START (the context before a resume point). */
export const READ_RANGE = `
${HOME_PATH_SH}
LOG=$(home_path "$1")
tail -c "+$(($2 + 1))" -- "$LOG" 2>/dev/null | head -c "$3" || true
`;

/**
 * snapshot LOG N: the last N lines of the log's first SIZE bytes, then a newline and `GLM_SIZE SIZE` (last, so an
 * output cut to its tail keeps it). One read, so a follower starting at SIZE sees every line written after the
 * snapshot and none of it again.
 */
export const SNAPSHOT = `
${HOME_PATH_SH}
LOG=$(home_path "$1")
size=$(wc -c < "$LOG") || exit 1
head -c "$size" -- "$LOG" | tail -n "$2"
printf '\\nGLM_SIZE %s\\n' "$size"
`;

/** tail LOG N */
export const TAIL = `
${HOME_PATH_SH}
LOG=$(home_path "$1")
tail -n "$2" -- "$LOG"
`;

/** gpus PATH_PREPEND (stdin: NAME=VALUE lines): per-GPU memory from nvidia-smi (in the host's env), or NO_NVIDIA_SMI. */
export const GPUS = `
if [ -n "$1" ]; then PATH=$1:$PATH; export PATH; fi
# Each line is one word for export, which assigns it as a whole: nothing in it is parsed by the shell.
while IFS= read -r kv; do case $kv in [A-Za-z_]*=*) export "$kv" ;; esac; done
command -v nvidia-smi >/dev/null 2>&1 || { echo NO_NVIDIA_SMI; exit 0; }
nvidia-smi --query-gpu=index,name,memory.used,memory.total,compute_cap --format=csv,noheader,nounits
echo APPS
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null || true
`;

// PYTHON PATH_PREPEND ENV_FILE ORDER (stdin: NAME=VALUE lines): the environment the server's python runs in on this
// host, so what is asked of it is what the server imports. ORDER says how its launch builds it: `file-env` (a direct
// launch: the env file sourced, then the run's env over it) or `env-file` (a Slurm batch script: its export lines,
// then the cluster's env_file over them); PATH_PREPEND comes first either way. Each stdin line is one word for export,
// which assigns it as a whole (nothing in it is parsed by the shell); the env file is read, as the launch reads it,
// only when it is readable, and nothing of it travels on a command line.
const PYTHON_ENV = `
${HOME_PATH_SH}
if [ -n "$2" ]; then PATH=$2:$PATH; export PATH; fi
ENVF=; [ -n "$3" ] && ENVF=$(home_path "$3")
env_file() { if [ -n "$ENVF" ] && [ -r "$ENVF" ]; then set -a; . "$ENVF" >/dev/null 2>&1 </dev/null; set +a; fi; }
[ "$4" = file-env ] && env_file
while IFS= read -r kv; do case $kv in [A-Za-z_]*=*) export "$kv" ;; esac; done
[ "$4" = env-file ] && env_file
PY=$(home_path "$1")
`;

/** versions PYTHON PATH_PREPEND ENV_FILE ORDER (stdin: the env, as PYTHON_ENV): the server's Python and SGLang versions. */
export const VERSIONS = `${PYTHON_ENV}
printf 'python %s\\n' "$("$PY" --version 2>&1 | head -n 1)"
printf 'sglang %s\\n' "$("$PY" -c 'import sglang; print(sglang.__version__)' 2>&1 | tail -n 1)"
`;

/**
 * sglang-help PYTHON PATH_PREPEND ENV_FILE ORDER (stdin: the env, as PYTHON_ENV): SGLang's own list of launch flags,
 * `python -m sglang.launch_server --help` (argparse prints it and exits 0 before any server starts).
 */
export const SGLANG_HELP = `${PYTHON_ENV}
exec "$PY" -m sglang.launch_server --help
`;

export function script(body: string, name: string, args: readonly string[]): string[] {
  return ['sh', '-c', body, name, ...args];
}
