// The per-turn read budget is shared by every connection of the process:
// four connections streaming at once are handed at most about one budget per
// event-loop turn together (not one each), every byte arrives in order, and
// none is lost. Counts, not times.
import { describe, expect, it } from 'vitest';
import { Conn, READ_BUDGET_PER_TURN } from './conn';
import { memoryDuplexPair } from './testing/duplex-pair';

const CHUNK = 64 * 1024;
const PER_CONN = 2 * READ_BUDGET_PER_TURN;

describe('Conn read budget', () => {
  it('four streaming connections share one budget per turn, and every byte arrives in order', async () => {
    const ends = Array.from({ length: 4 }, () => memoryDuplexPair());
    const conns = ends.map(([, server]) => new Conn(server, { readDir: 'up' }));
    // Turns counted by an immediate that re-arms itself: bytes consumed between two of its runs.
    let turnBytes = 0;
    let maxTurnBytes = 0;
    let ticking = true;
    const tick = () => {
      maxTurnBytes = Math.max(maxTurnBytes, turnBytes);
      turnBytes = 0;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const received = conns.map(() => [] as number[]);
    const done = Promise.all(
      conns.map(
        (c, i) =>
          new Promise<void>((resolve) => {
            let got = 0;
            c.setConsumer((chunk) => {
              turnBytes += chunk.length;
              got += chunk.length;
              // The first byte of every chunk the writer sent carries its sequence number.
              for (let o = 0; o < chunk.length; o += CHUNK) received[i].push(chunk[o]);
              if (got === PER_CONN) resolve();
            });
          }),
      ),
    );
    for (const [client] of ends)
      for (let s = 0; s < PER_CONN / CHUNK; s++) client.write(new Uint8Array(CHUNK).fill(s & 0xff));
    await done;
    ticking = false;
    for (const r of received) expect(r).toEqual(Array.from({ length: PER_CONN / CHUNK }, (_, s) => s & 0xff));
    // One budget per turn for all four (a budget each would let 4 MiB through in one turn); a turn
    // as the ticker sees it may straddle one budget reset, and a chunk in flight may cross the line.
    expect(maxTurnBytes).toBeLessThanOrEqual(2 * (READ_BUDGET_PER_TURN + CHUNK));
    for (const c of conns) c.destroy();
  });
});
