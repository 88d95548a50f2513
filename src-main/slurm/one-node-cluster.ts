// A one-node Slurm cluster in a temporary folder, from Debian's slurm-wlm and
// munge: the test setup's (and a person's `scripts/slurm-one-node.mjs`) way
// to run `relay-lab slurm` for real on one machine. Its own munge key and
// socket, its own slurm.conf (one node, proctrack/linuxproc, select/cons_tres,
// oversubscription allowed) and its own ports, so it touches nothing of a
// system cluster; stop() ends the three daemons and removes the folder.
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface OneNodeCluster {
  dir: string;
  /** The environment Slurm's clients need to reach this cluster (SLURM_CONF). */
  env: NodeJS.ProcessEnv;
  node: string;
  stop(): Promise<void>;
}

/** Why this machine cannot start a one-node cluster, or null when it can. */
export function oneNodeClusterUnavailable(): string | null {
  if (process.platform !== 'linux') return 'Slurm runs on Linux only';
  if (process.getuid?.() !== 0) return 'starting slurmctld, slurmd and munged needs root';
  for (const bin of ['munged', 'slurmctld', 'slurmd', 'sbatch', 'squeue', 'scontrol', 'scancel']) {
    const found = spawnSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' });
    if (found.status !== 0) return `${bin} is not installed (apt-get install slurm-wlm munge)`;
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function slurmConf(dir: string, node: string, ports: [number, number]): string {
  return [
    'ClusterName=relaylab',
    `SlurmctldHost=${node}`,
    'SlurmUser=root',
    'SlurmdUser=root',
    `SlurmctldPort=${ports[0]}`,
    `SlurmdPort=${ports[1]}`,
    'AuthType=auth/munge',
    'CredType=cred/munge',
    `AuthInfo=socket=${dir}/munge.sock`,
    `StateSaveLocation=${dir}/state`,
    `SlurmdSpoolDir=${dir}/spool`,
    `SlurmctldPidFile=${dir}/slurmctld.pid`,
    `SlurmdPidFile=${dir}/slurmd.pid`,
    `SlurmctldLogFile=${dir}/log/slurmctld.log`,
    `SlurmdLogFile=${dir}/log/slurmd.log`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core',
    'SchedulerType=sched/builtin',
    'JobAcctGatherType=jobacct_gather/none',
    'AccountingStorageType=accounting_storage/none',
    'JobCompType=jobcomp/filetxt',
    `JobCompLoc=${dir}/log/jobcomp.txt`,
    'MpiDefault=none',
    'ReturnToService=2',
    // Finished jobs stay visible to `scontrol show job` for 10 minutes: how `slurm submit --wait` reads their end.
    'MinJobAge=600',
    'KillWait=3',
    `NodeName=${node} CPUs=${os.availableParallelism()} State=UNKNOWN`,
    // Tasks on the one node stand in for hosts: more of them than cores is the point.
    `PartitionName=lab Nodes=${node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:64`,
    '',
  ].join('\n');
}

function readPid(file: string): number | null {
  try {
    const n = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : null;
  } catch {
    return null;
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, limitMs: number): Promise<void> {
  const end = Date.now() + limitMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > end) throw new Error(`one-node Slurm cluster: ${what} not ready after ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startOneNodeCluster(): Promise<OneNodeCluster> {
  const why = oneNodeClusterUnavailable();
  if (why) throw new Error(`cannot start a one-node Slurm cluster: ${why}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-lab-slurm-'));
  for (const sub of ['state', 'spool', 'log']) fs.mkdirSync(path.join(dir, sub));
  const node = os.hostname();
  const key = path.join(dir, 'munge.key');
  fs.writeFileSync(key, (await import('node:crypto')).randomBytes(1024), { mode: 0o400 });
  const conf = path.join(dir, 'slurm.conf');
  fs.writeFileSync(conf, slurmConf(dir, node, [await freePort(), await freePort()]));
  const env = { ...process.env, SLURM_CONF: conf };
  const pidFiles = ['slurmd.pid', 'slurmctld.pid', 'munged.pid'].map((f) => path.join(dir, f));
  const stop = async () => {
    for (const file of pidFiles) {
      const pid = readPid(file);
      if (pid === null) continue;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        continue;
      }
      const end = Date.now() + 5000;
      while (Date.now() < end) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await run('munged', [
      `--key-file=${key}`,
      `--socket=${dir}/munge.sock`,
      `--pid-file=${dir}/munged.pid`,
      `--log-file=${dir}/log/munged.log`,
      `--seed-file=${dir}/munge.seed`,
      '--force',
    ]);
    await run('slurmctld', [], { env });
    await run('slurmd', [], { env });
    await waitFor(
      'the node',
      async () => {
        const { stdout } = await run('sinfo', ['-h', '-o', '%T'], { env });
        return /idle|mixed|alloc/.test(stdout);
      },
      30_000,
    );
  } catch (e) {
    const logs = ['slurmctld.log', 'slurmd.log', 'munged.log']
      .map((f) => {
        try {
          return `${f}: ${fs
            .readFileSync(path.join(dir, 'log', f), 'utf8')
            .split('\n')
            .slice(-5)
            .join(' | ')}`;
        } catch {
          return '';
        }
      })
      .join('\n');
    await stop();
    throw new Error(`one-node Slurm cluster failed to start: ${(e as Error).message}\n${logs}`, { cause: e });
  }
  return { dir, env, node, stop };
}
