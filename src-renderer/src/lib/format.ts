// Number formatting for an instrument: exact where it matters, short where it is read at a glance.
export function formatBytes(n: number): string {
  if (!Number.isFinite(n)) return '–';
  const abs = Math.abs(n);
  if (abs < 1024) return `${Math.round(n)} B`;
  if (abs < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (abs < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(2)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatRate(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

export function formatTime(ms: number): string {
  return (ms / 1000).toFixed(3);
}

export function formatRatio(r: number): string {
  return Number.isFinite(r) ? r.toFixed(4) : '–';
}

// One formatter, made once: toLocaleString builds one per call, and the list formats every frame.
const intFormat = new Intl.NumberFormat('en-US');
export function formatInt(n: number): string {
  return intFormat.format(n);
}

/** "1 link", "2 links": a count with its noun in agreement. */
export function plural(n: number, word: string): string {
  return `${formatInt(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** A run's duration as people read one: ms under 10 s ("106 ms"), seconds above ("12.3 s"). */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  return ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
