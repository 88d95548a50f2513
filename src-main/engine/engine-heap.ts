// The engine's V8 heap, tuned for rounds with no major GC inside them.
//
// The engine keeps a small live heap (about 10 MB) and allocates fast in the
// young generation (about 0.7 MB a round at 1x4 x 256 KiB), so V8 grows its
// new space to 16 MB. V8 starts incremental marking as soon as the old
// generation's headroom (its limit minus its size) is no larger than the new
// space (Heap::IncrementalMarkingLimitReached: a scavenge could promote it
// all). With its default growing factor for a heap this small, the headroom
// after each major GC was about 15 MB: the next marking began at once, and a
// major GC landed every 7 rounds, a 2 to 6 ms pause in the middle of a
// round (most of a 256 KiB round's slowest decile). A fixed factor of 4, the
// top of V8's own dynamic range, leaves about 30 MB of headroom: 6 major GCs
// in 220 rounds instead of 29, for about 20 MB more heap. The factor is read
// at each GC, so setting it once the process runs takes effect.
import v8 from 'node:v8';

/** The old generation grows to (1 + this / 100) x its live size before the next major GC. */
export const ENGINE_HEAP_GROWING_PERCENT = 300;

let tuned = false;

/** Applies the engine's heap tuning to this process (once). */
export function tuneEngineHeap(): void {
  if (tuned) return;
  tuned = true;
  v8.setFlagsFromString(`--heap-growing-percent=${ENGINE_HEAP_GROWING_PERCENT}`);
}
