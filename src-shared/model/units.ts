// Bandwidths and latencies as people write them, for `relay-lab predict` and
// Explore's "Beyond this machine": 12.5GB/s (bytes), 100Gb/s (bits), 50MB/s,
// 800MiB/s, or a plain number of bytes per second; 0.5ms, 20us, 1s.
// Decimal prefixes for GB/Gb (network convention), binary for GiB.

export class UnitError extends Error {
  override readonly name = 'UnitError';
}

const PREFIX: Record<string, number> = { '': 1, k: 1e3, m: 1e6, g: 1e9, t: 1e12 };
const BINARY: Record<string, number> = { ki: 2 ** 10, mi: 2 ** 20, gi: 2 ** 30, ti: 2 ** 40 };

/** Bytes per second from `12.5GB/s`, `100Gb/s`, `100Gbps`, `800MiB/s` or `50000000`. */
export function parseBandwidth(text: string, name = 'bandwidth'): number {
  const s = text.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return checked(Number(s), name, text);
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]i?)?(b|B)(?:\/s|ps)$/i.exec(s);
  if (!m)
    throw new UnitError(
      `${name} must be a rate such as 12.5GB/s, 100Gb/s or 50000000 (bytes/s), got '${text}'`,
    );
  const p = (m[2] ?? '').toLowerCase();
  const mult = p.endsWith('i') ? BINARY[p] : PREFIX[p];
  // Lower-case b is bits, upper-case B bytes (100Gb/s = 12.5GB/s).
  const bytes = m[3] === 'b' ? (Number(m[1]) * mult) / 8 : Number(m[1]) * mult;
  return checked(bytes, name, text);
}

function checked(v: number, name: string, text: string): number {
  if (!(v > 0) || !Number.isFinite(v)) throw new UnitError(`${name} must be above 0, got '${text}'`);
  return v;
}

/** Milliseconds from `0.5ms`, `20us`, `1s` or a plain number of ms. */
export function parseLatency(text: string, name = 'latency'): number {
  const m = /^(\d+(?:\.\d+)?)\s*(ms|us|µs|s|ns)?$/i.exec(text.trim());
  if (!m) throw new UnitError(`${name} must be a time such as 0.5ms, 20us or 1s, got '${text}'`);
  const unit = (m[2] ?? 'ms').toLowerCase();
  const f = unit === 's' ? 1000 : unit === 'us' || unit === 'µs' ? 1e-3 : unit === 'ns' ? 1e-6 : 1;
  return Number(m[1]) * f;
}

/** A rate for people: 12.5 GB/s (100 Gb/s). */
export function formatBandwidth(bytesPerS: number): string {
  const units: [number, string][] = [
    [1e12, 'TB/s'],
    [1e9, 'GB/s'],
    [1e6, 'MB/s'],
    [1e3, 'kB/s'],
  ];
  for (const [f, u] of units)
    if (bytesPerS >= f)
      return `${+(bytesPerS / f).toPrecision(3)} ${u} (${+((bytesPerS * 8) / f).toPrecision(3)} ${u.replace('B', 'b')})`;
  return `${+bytesPerS.toPrecision(3)} B/s`;
}
