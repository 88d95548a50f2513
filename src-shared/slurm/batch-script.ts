// The batch script `relay-lab slurm script` prints and `slurm submit` hands to
// sbatch: meant to be read and edited by a person. One Slurm task per host
// (its relay and its ranks, one srun step for all), the controller in the
// first task's allocation; the salt made by the job itself into a file only
// its user can read, so it never appears on a command line `ps` shows.

export interface BatchScriptOptions {
  jobName: string;
  /** One task per host. */
  hosts: number;
  /** Where the job writes its salt, rendezvous, report and trace (a shared filesystem). */
  out: string;
  /** sbatch options as the person gave them (--partition=..., --time=...), passed through. */
  sbatch: string[];
  /** How a node runs relay-lab: e.g. [node, /path/bin/relay-lab.mjs]. */
  relayLab: string[];
  /** The run's flags (topology, rounds, faults), as `relay-lab run` takes them. */
  runFlags: string[];
  /** A salt file to use instead of one the job makes. */
  saltFile?: string;
  /** --watch ADDR[:PORT] for the watch server (default: loopback, a free port). */
  watch?: string;
  /** false: the remote hosts' loopback legs stay on their nodes (not in the job's trace and window). */
  remoteLegs?: boolean;
  /** What the job was made from, for the person reading it. */
  describe: string;
}

/** Single-quotes a word for a POSIX shell unless it is plainly safe. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function words(ws: string[]): string {
  return ws.map(shellQuote).join(' ');
}

export function batchScript(o: BatchScriptOptions): string {
  const header = [
    '#!/bin/bash',
    `#SBATCH --job-name=${shellQuote(o.jobName)}`,
    `#SBATCH --ntasks=${o.hosts}`,
    `#SBATCH --output=${shellQuote(`${o.out}/slurm-%j.out`)}`,
    // Relays and ranks mostly wait on sockets; without this a node takes one task per core.
    '#SBATCH --overcommit',
    ...o.sbatch.map((s) => `#SBATCH ${s}`),
  ];
  const saltStep = o.saltFile
    ? [`SALT_FILE=${shellQuote(o.saltFile)}`]
    : [
        'SALT_FILE="$OUT/salt"',
        "# 16 random bytes, hex, readable by the job's user only (umask 077): the HMAC key of every link.",
        '[ -s "$SALT_FILE" ] || head -c 16 /dev/urandom | od -An -tx1 | tr -d \' \\n\' > "$SALT_FILE"',
      ];
  return [
    ...header,
    '',
    `# Relay Lab: ${o.describe}.`,
    '# Task 0 runs the controller, the coordinator and host h0; task N runs host hN (its relay and',
    '# its ranks). Every task finds the controller through $OUT/engine.json (a shared folder), so',
    '# ports are chosen per node and never collide, however many hosts share a node.',
    'set -euo pipefail',
    'umask 077',
    `OUT=${shellQuote(o.out)}`,
    'mkdir -p "$OUT"',
    ...saltStep,
    `RELAY_LAB=(${words(o.relayLab)})`,
    '',
    '# One step, one task per host; a task that fails ends the others (nothing is left running).',
    `srun --kill-on-bad-exit=1 --ntasks=${o.hosts} "\${RELAY_LAB[@]}" slurm task --out "$OUT" --salt-file "$SALT_FILE"${o.watch ? ` --watch ${shellQuote(o.watch)}` : ''}${o.remoteLegs === false ? ' --no-remote-legs' : ''} -- ${words(o.runFlags)}`,
    '',
  ].join('\n');
}
