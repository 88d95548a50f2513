// The window benchmark's engine process seen from its driver: one JSON command
// a line on stdin, one "BENCH {...}" answer a line on stdout (bench-server.ts).
// Shared by the bench's driver and the records list's end-to-end test.
import type { ChildProcess } from 'node:child_process';
import readline from 'node:readline';

export class ServerProcess {
  private readonly waiters = new Map<number, (body: Record<string, unknown>) => void>();
  private nextId = 1;
  readonly ready: Promise<string>;
  constructor(readonly child: ChildProcess) {
    let onUrl: (u: string) => void;
    this.ready = new Promise((r) => (onUrl = r));
    const rl = readline.createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      if (!line.startsWith('BENCH ')) return;
      const body = JSON.parse(line.slice(6)) as Record<string, unknown>;
      if (typeof body.url === 'string') onUrl(body.url);
      const id = body.id as number | undefined;
      if (id !== undefined) this.waiters.get(id)?.(body);
      if (id !== undefined) this.waiters.delete(id);
    });
    child.stderr!.on('data', (c: Buffer) => process.stderr.write(c));
  }
  ask(op: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiters.set(id, (b) =>
        b.ok === false ? reject(new Error(`${op}: ${String(b.error)}`)) : resolve(b),
      );
      this.child.stdin!.write(JSON.stringify({ id, op, ...args }) + '\n');
    });
  }
}
