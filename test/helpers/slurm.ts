// A real Slurm on this machine for the tests: munged with its own key and socket, slurmctld and slurmd on loopback
// with a generated slurm.conf, state and spool in a temp dir. What it took to get `sbatch --wrap hostname` working
// by hand on Debian bookworm's Slurm 22.05.8 (and so what this helper does):
// - munged refuses a socket whose directory others cannot enter ("execute permissions for all required"): the
//   socket lives in its own 0755 directory, the key in a 0700 one; `--force` is not needed as root.
// - slurm.conf: AuthInfo=socket=PATH points both the daemons and the clients at that munged; SlurmctldPort and
//   SlurmdPort are free ports (not 6817/6818); SlurmUser=root (the daemons run as root: slurmd must start jobs as
//   the submitting user); ProctrackType=proctrack/linuxproc and TaskPlugin=task/none (no cgroups in a container);
//   select/cons_tres with GresTypes=gpu; the node is this machine's hostname with NodeAddr=127.0.0.1.
// - gres.conf next to slurm.conf: `Name=gpu File=.../dev/gpu0` on an empty placeholder file is accepted (Slurm
//   does not set CUDA_VISIBLE_DEVICES for it, which the stand-in does not need).
// - The clients find the cluster through SLURM_CONF; the test user needs the conf and the socket readable.
// - A --time limit has a one-minute resolution, and slurmctld checks limits about every 30 s: a job with --time=1
//   ends as TIMEOUT after 60-90 s. KillWait=2 keeps scancel's TERM-to-KILL wait short.
// - The mpi/pmix errors slurmd logs at start are harmless (MpiDefault=none).
// - Two compute nodes: one slurmd per network namespace (test/helpers/netns.ts's hosts), each `-N nodeI` with its
//   namespace's address as NodeAddr, slurmctld in the root namespace on the bridge's address. slurmd must be
//   started with `nsenter --net=...`, not `ip netns exec`: the latter remounts /sys for the namespace, without
//   /sys/fs/cgroup, and slurmd then fails ("Unable to initialize cgroup plugin"). SlurmdSpoolDir and SlurmdPidFile
//   take %n so the two slurmd keep apart; srun's steps reach back across the bridge.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { LoadedConfig } from '../../src/config/load.ts';
import { PACKAGE_ROOT, validate } from '../../src/config/load.ts';
import type { NewAttempt } from '../../src/ledger/attempts.ts';
import { attemptRow, standinHost } from './app.ts';
import { descendants, freePort, type Sshd, startSshd } from './sshd.ts';

const BINARIES = ['/usr/sbin/munged', '/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/bin/sbatch'];

/** Slurm's daemons can run here: the binaries are installed and we are root (slurmd starts jobs as their users). */
export const slurmAvailable = BINARIES.every((b) => existsSync(b)) && process.getuid?.() === 0;

export interface TestCluster {
  dir: string;
  conf: string;
  node: string;
  /** Runs a Slurm client command as root against this cluster. */
  run(argv: string[], opts?: { asUser?: string; input?: string }): string;
  /** Kills a node's slurmd (SIGKILL, as a crashed machine would go silent); its jobs' slurmstepd live on. */
  killSlurmd(node: string): Promise<void>;
  stop(): Promise<void>;
}

async function waitFor(what: () => boolean, ms: number, why: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error(why());
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface ClusterOptions {
  /** GPUs (placeholder gres files) per node. */
  gpus?: number;
  maxTimeMin?: number;
  /** Compute nodes in network namespaces (their addresses and namespaces); default: this machine on 127.0.0.1. */
  nodes?: Array<{ address: string; netns?: string }>;
  /** slurm.conf settings that replace (or add to) the defaults below, e.g. `{ SlurmdTimeout: '6' }`. */
  settings?: Record<string, string>;
  /** PartitionName lines instead of the one `gpu` partition (`Nodes=ALL` etc. are the caller's). */
  partitions?: string[];
  /**
   * task/cgroup on the cgroup v1 memory controller with ConstrainRAMSpace, so a job over its --mem is killed by the
   * kernel inside its own cgroup and Slurm records OUT_OF_MEMORY (needs a writable /sys/fs/cgroup/memory).
   */
  cgroupMemory?: boolean;
  /**
   * Job accounting: a MariaDB of the test's own (data dir in the cluster's temp dir, TCP on 127.0.0.1) behind a
   * slurmdbd, so `sacct` knows jobs the controller has forgotten.
   */
  accounting?: boolean;
}

/** The accounting stack can run here: slurmdbd, its MySQL plugin and MariaDB's server are installed. */
export const accountingAvailable = [
  '/usr/sbin/slurmdbd',
  '/usr/lib/x86_64-linux-gnu/slurm-wlm/accounting_storage_mysql.so',
  '/usr/sbin/mariadbd',
  '/usr/bin/mariadb-install-db',
].every((b) => existsSync(b));

/** A cgroup v1 memory controller this process may make child groups in (what task/cgroup's cgroup/v1 needs). */
export function cgroupMemoryAvailable(): boolean {
  const root = '/sys/fs/cgroup/memory';
  if (!existsSync(join(root, 'memory.limit_in_bytes'))) return false;
  try {
    const probe = mkdtempSync(join(root, 'glm-probe-'));
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

/**
 * MariaDB and slurmdbd for a cluster's accounting, as slurmdbd.conf(5) wants them: the conf next to slurm.conf (found
 * through SLURM_CONF), mode 0600 and owned by SlurmUser (root here), StorageType=accounting_storage/mysql on a
 * database user of its own. What it took by hand: `mariadb-install-db --no-defaults` into a temp data dir, `mariadbd
 * --user=root` (it refuses root otherwise) on a free port of 127.0.0.1, the cluster and the test user added with
 * sacctmgr before slurmctld starts.
 */
async function startAccounting(
  dir: string,
  env: NodeJS.ProcessEnv,
  dbdPort: number,
  mungeSocket: string,
): Promise<ChildProcess[]> {
  const db = join(dir, 'db');
  mkdirSync(db);
  execFileSync(
    '/usr/bin/mariadb-install-db',
    [
      '--no-defaults',
      `--datadir=${join(db, 'data')}`,
      '--user=root',
      '--auth-root-authentication-method=socket',
      '--skip-test-db',
    ],
    { stdio: 'ignore' },
  );
  const sqlPort = await freePort();
  const sock = join(db, 'mysql.sock');
  const mariadb = spawn(
    '/usr/sbin/mariadbd',
    [
      '--no-defaults',
      `--datadir=${join(db, 'data')}`,
      '--user=root',
      `--socket=${sock}`,
      `--port=${sqlPort}`,
      '--bind-address=127.0.0.1',
      `--pid-file=${join(db, 'pid')}`,
      `--log-error=${join(db, 'error.log')}`,
      '--skip-log-bin',
      '--innodb-buffer-pool-size=16M',
    ],
    { stdio: 'ignore' },
  );
  const sql = (q: string) =>
    execFileSync('/usr/bin/mariadb', ['--no-defaults', `--socket=${sock}`, '-e', q], { stdio: 'pipe' });
  await waitFor(
    () => {
      try {
        sql('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    20_000,
    () =>
      `mariadbd did not start: ${existsSync(join(db, 'error.log')) ? readFileSync(join(db, 'error.log'), 'utf8').slice(-1500) : ''}`,
  );
  const password = execFileSync('head', ['-c', '12', '/dev/urandom']).toString('hex');
  sql(
    `CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '${password}'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';`,
  );
  writeFileSync(
    join(dir, 'slurmdbd.conf'),
    [
      'AuthType=auth/munge',
      `AuthInfo=socket=${mungeSocket}`,
      'DbdAddr=127.0.0.1',
      `DbdHost=${hostname()}`,
      `DbdPort=${dbdPort}`,
      'SlurmUser=root',
      `LogFile=${join(dir, 'log', 'slurmdbd.log')}`,
      `PidFile=${join(dir, 'run', 'slurmdbd.pid')}`,
      'StorageType=accounting_storage/mysql',
      'StorageHost=127.0.0.1',
      `StoragePort=${sqlPort}`,
      'StorageUser=slurm',
      `StoragePass=${password}`,
      'StorageLoc=slurm_acct_db',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
  const slurmdbd = spawn('/usr/sbin/slurmdbd', ['-D'], { env, stdio: 'ignore' });
  const sacctmgr = (args: string[]) => execFileSync('sacctmgr', ['-i', ...args], { env, stdio: 'pipe' });
  await waitFor(
    () => {
      try {
        sacctmgr(['show', 'cluster']);
        return true;
      } catch {
        return false;
      }
    },
    20_000,
    () =>
      `slurmdbd did not answer: ${existsSync(join(dir, 'log', 'slurmdbd.log')) ? readFileSync(join(dir, 'log', 'slurmdbd.log'), 'utf8').slice(-1500) : ''}`,
  );
  sacctmgr(['add', 'cluster', 'glmtest']);
  sacctmgr(['add', 'account', 'glm', 'Cluster=glmtest']);
  sacctmgr(['add', 'user', 'glmtest', 'Account=glm', 'Cluster=glmtest']);
  // Stopped in reverse: slurmdbd before its database.
  return [mariadb, slurmdbd];
}

export async function startCluster(opts: ClusterOptions = {}): Promise<TestCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'glm-slurm-'));
  chmodSync(dir, 0o755);
  for (const d of ['munge', 'run', 'state', 'spool', 'log', 'dev']) mkdirSync(join(dir, d));
  chmodSync(join(dir, 'munge'), 0o700);
  chmodSync(join(dir, 'run'), 0o755);
  const key = join(dir, 'munge', 'munge.key');
  writeFileSync(key, execFileSync('head', ['-c', '1024', '/dev/urandom']), { mode: 0o600 });
  const socket = join(dir, 'run', 'munge.sock');
  execFileSync('/usr/sbin/munged', [
    `--socket=${socket}`,
    `--key-file=${key}`,
    `--log-file=${join(dir, 'munge', 'log')}`,
    `--pid-file=${join(dir, 'munge', 'pid')}`,
    `--seed-file=${join(dir, 'munge', 'seed')}`,
  ]);
  const gpus = opts.gpus ?? 1;
  const node = opts.nodes ? 'node0' : hostname();
  const nodes = opts.nodes
    ? opts.nodes.map((n, i) => ({ name: `node${i}`, address: n.address, netns: n.netns }))
    : [{ name: node, address: '127.0.0.1', netns: undefined }];
  // slurmctld listens where the nodes reach it: loopback, or the namespaces' bridge (their x.y.z.1).
  const ctldAddress = opts.nodes ? opts.nodes[0]!.address.replace(/\.\d+$/, '.1') : '127.0.0.1';
  for (const n of nodes) {
    mkdirSync(join(dir, 'spool', n.name));
    for (let i = 0; i < gpus; i++) writeFileSync(join(dir, 'dev', `${n.name}-gpu${i}`), '');
  }
  const [ctldPort, slurmdPort, dbdPort] = [await freePort(), await freePort(), await freePort()];
  const conf = join(dir, 'slurm.conf');
  const defaults: Record<string, string> = {
    ClusterName: 'glmtest',
    SlurmctldHost: `${hostname()}(${ctldAddress})`,
    SlurmctldPort: String(ctldPort),
    SlurmdPort: String(slurmdPort),
    SlurmUser: 'root',
    AuthType: 'auth/munge',
    AuthInfo: `socket=${socket}`,
    CredType: 'cred/munge',
    StateSaveLocation: join(dir, 'state'),
    SlurmdSpoolDir: join(dir, 'spool', '%n'),
    SlurmctldPidFile: join(dir, 'run', 'slurmctld.pid'),
    SlurmdPidFile: join(dir, 'run', 'slurmd-%n.pid'),
    SlurmctldLogFile: join(dir, 'log', 'slurmctld.log'),
    SlurmdLogFile: join(dir, 'log', 'slurmd-%n.log'),
    ProctrackType: 'proctrack/linuxproc',
    TaskPlugin: 'task/none',
    SelectType: 'select/cons_tres',
    SelectTypeParameters: 'CR_Core',
    GresTypes: 'gpu',
    SchedulerType: 'sched/backfill',
    MpiDefault: 'none',
    ReturnToService: '2',
    InactiveLimit: '0',
    KillWait: '2',
    MinJobAge: '300',
    JobAcctGatherType: 'jobacct_gather/none',
    AccountingStorageType: 'accounting_storage/none',
  };
  if (opts.accounting) {
    defaults.AccountingStorageType = 'accounting_storage/slurmdbd';
    defaults.AccountingStorageHost = '127.0.0.1';
    defaults.AccountingStoragePort = String(dbdPort);
    // The clients' and slurmctld's MUNGE socket for slurmdbd (slurm.conf(5): for slurmdbd it names MUNGE's socket).
    defaults.AccountingStoragePass = socket;
  }
  if (opts.cgroupMemory) {
    defaults.TaskPlugin = 'task/cgroup';
    // Memory is then a consumable resource: a job's --mem is its cgroup's limit.
    defaults.SelectTypeParameters = 'CR_Core_Memory';
  }
  const settings = { ...defaults, ...opts.settings };
  writeFileSync(
    conf,
    [
      ...Object.entries(settings).map(([k, v]) => `${k}=${v}`),
      ...nodes.map(
        (n) =>
          `NodeName=${n.name} NodeAddr=${n.address} CPUs=${opts.nodes ? 1 : 2} RealMemory=1000 Gres=gpu:${gpus} State=UNKNOWN`,
      ),
      ...(opts.partitions ?? [`PartitionName=gpu Nodes=ALL Default=YES MaxTime=${opts.maxTimeMin ?? 60} State=UP`]),
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'gres.conf'),
    nodes.map((n) => `NodeName=${n.name} Name=gpu File=${join(dir, 'dev')}/${n.name}-gpu[0-${gpus - 1}]\n`).join(''),
  );
  if (opts.cgroupMemory) {
    // cgroup.conf(5): the v1 plugin on the mounted memory controller; ConstrainRAMSpace sets the job's --mem as the
    // cgroup's limit, so the kernel's OOM killer acts inside the job and slurmstepd sees the OOM event.
    writeFileSync(
      join(dir, 'cgroup.conf'),
      'CgroupPlugin=cgroup/v1\nConstrainRAMSpace=yes\nConstrainSwapSpace=no\nConstrainCores=no\nConstrainDevices=no\n',
    );
  }
  const env = { ...process.env, SLURM_CONF: conf };
  const daemons: ChildProcess[] = [];
  const slurmds = new Map<string, ChildProcess>();
  if (opts.accounting) daemons.push(...(await startAccounting(dir, env, dbdPort, socket)));
  // -D: in the foreground, so they are our children and end with us; -i: ignore state from an earlier run.
  daemons.push(spawn('/usr/sbin/slurmctld', ['-D', '-i', '-f', conf], { env, stdio: 'ignore' }));
  const run: TestCluster['run'] = (argv, o = {}) => {
    const [cmd, ...args] = o.asUser ? ['runuser', '-u', o.asUser, '--', 'env', `SLURM_CONF=${conf}`, ...argv] : argv;
    return execFileSync(cmd!, args, { env, encoding: 'utf8', input: o.input, stdio: ['pipe', 'pipe', 'pipe'] });
  };
  const ok = (argv: string[]) => {
    try {
      run(argv);
      return true;
    } catch {
      return false;
    }
  };
  const log = (f: string) =>
    existsSync(join(dir, 'log', f)) ? readFileSync(join(dir, 'log', f), 'utf8').slice(-2000) : '';
  await waitFor(
    () => ok(['scontrol', 'ping']),
    15_000,
    () => `slurmctld did not answer: ${log('slurmctld.log')}`,
  );
  for (const n of nodes) {
    const argv = ['-D', '-f', conf, ...(opts.nodes ? ['-N', n.name] : [])];
    const p = n.netns
      ? spawn('nsenter', [`--net=/run/netns/${n.netns}`, '/usr/sbin/slurmd', ...argv], { env, stdio: 'ignore' })
      : spawn('/usr/sbin/slurmd', argv, { env, stdio: 'ignore' });
    daemons.push(p);
    slurmds.set(n.name, p);
  }
  await waitFor(
    () => {
      // One row per node and partition: a node in two partitions is listed twice.
      const rows = new Set(run(['sinfo', '-h', '-N', '-o', '%N %T']).trim().split('\n'));
      return rows.size === nodes.length && [...rows].every((t) => / idle/.test(t));
    },
    20_000,
    () => `slurmd did not register: ${log(`slurmd-${nodes.at(-1)!.name}.log`)}`,
  );
  return {
    dir,
    conf,
    node,
    run,
    async killSlurmd(name) {
      const p = slurmds.get(name);
      if (!p?.pid) throw new Error(`no slurmd for node ${name}`);
      // The node's job steps go with it (a machine that died takes its processes along): this cluster's slurmstepd
      // (SLURM_CONF in their environment) in the node's network namespace, and everything they started.
      const netns = (pid: number) => readlinkSync(`/proc/${pid}/ns/net`);
      const ns = netns(p.pid);
      const steps = readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .map(Number)
        .filter((pid) => {
          try {
            return (
              readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('slurmstepd') &&
              readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`SLURM_CONF=${conf}`) &&
              netns(pid) === ns
            );
          } catch {
            return false; // gone meanwhile
          }
        });
      const victims = [p.pid, ...steps.flatMap((s) => [s, ...descendants(s)])];
      const exited = new Promise<void>((resolve) => p.once('exit', () => resolve()));
      for (const pid of victims) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      await exited;
    },
    async stop() {
      // Jobs first (their slurmstepd outlive slurmd), then the daemons we started, then munged by its pid file.
      try {
        run(['scancel', '--full', '--signal=KILL', '--user=glmtest']);
      } catch {
        // none
      }
      await waitFor(
        () => run(['squeue', '-h']).trim() === '',
        15_000,
        () => 'jobs did not end',
      ).catch(() => {});
      for (const p of daemons.reverse()) {
        if (p.exitCode !== null || p.signalCode !== null || p.pid === undefined) continue;
        await new Promise<void>((resolve) => {
          p.once('exit', () => resolve());
          p.kill('SIGTERM');
          setTimeout(() => p.kill('SIGKILL'), 5000).unref();
        });
      }
      const pid = Number(readFileSync(join(dir, 'munge', 'pid'), 'utf8').trim());
      if (pid > 0) process.kill(pid, 'SIGTERM');
    },
  };
}

/**
 * One cluster and one login sshd shared by a test file's tests: started before them (when Slurm can run here) and
 * stopped after. Read `cluster` and `sshd` inside tests, not at import: they exist only once the hooks have run.
 */
export function clusterForFile(opts: ClusterOptions = { gpus: 1 }): {
  readonly cluster: TestCluster;
  readonly sshd: Sshd;
} {
  const started: { cluster?: TestCluster; sshd?: Sshd } = {};
  beforeAll(async () => {
    if (!slurmAvailable) return;
    started.cluster = await startCluster(opts);
    started.sshd = await startSshd();
  }, 60_000);
  afterAll(async () => {
    await started.cluster?.stop();
    await started.sshd?.stop();
  }, 60_000);
  return {
    get cluster() {
      if (!started.cluster) throw new Error('the test cluster is not started (read it inside a test)');
      return started.cluster;
    },
    get sshd() {
      if (!started.sshd) throw new Error('the login sshd is not started (read it inside a test)');
      return started.sshd;
    },
  };
}

/** A ledger attempt of profile `small` on the cluster entry, for tests of the ledger's side alone (no job behind it). */
export const clusterAttemptRow = (): NewAttempt => ({
  ...attemptRow('', 30000, 'U1'),
  gpus: undefined,
  host: 'cluster',
  profile: 'small',
  origin: 'cli',
  startedAt: 0,
  leases: [],
});

/** A host entry for a Slurm cluster whose login node is the test's sshd; the job's python is the stand-in's. */
export function slurmHost(
  sshd: Sshd,
  conf: string,
  workdir: string,
  slurm: Record<string, unknown> = {},
  python?: string,
): Record<string, unknown> {
  return { ...standinHost(sshd, workdir), ...(python ? { python } : {}), slurm: { slurm_conf: conf, ...slurm } };
}

/** The bot's config over these hosts, `cluster` the default, with the time a job takes to be scheduled and load. */
export function slurmConfig(
  hosts: Record<string, unknown>,
  dataDir: string,
  profilesDir = join(PACKAGE_ROOT, 'profiles'),
): LoadedConfig {
  const raw = {
    default_host: 'cluster',
    timeouts: { connect_s: 5, command_s: 20, keepalive_s: 2, ready_s: 120, stop_grace_s: 2 },
    hosts,
  };
  return { config: validate(raw, 'test config'), source: 'test config', dataDir, profilesDir, defaultHost: 'cluster' };
}
