// Paces the one coalescer (src-shared/lab/event-coalescer.ts): at most one
// batch per FRAME_MS. The topology session uses one to turn per-unit tap
// callbacks into frames; each front end's client (Electron window, browser
// tab) has its own, held while its socket has not drained.
import type { LabBatch } from '@shared/lab/contract';
import { EventCoalescer, FRAME_MS } from '@shared/lab/event-coalescer';

/**
 * Sends coalesced batches through `send` no more often than every FRAME_MS,
 * and holds them while `backlogged()` says the socket has not drained.
 */
export class FrameBatcher {
  private readonly coalescer = new EventCoalescer();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(
    private readonly send: (batch: LabBatch) => void,
    private readonly backlogged: () => boolean = () => false,
  ) {}

  push(batch: LabBatch): void {
    if (this.closed) return;
    this.coalescer.add(batch);
    this.schedule();
  }

  /** Sends what is pending now (a stopping session delivers its last events before stop() returns). */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.closed && !this.coalescer.empty) this.send(this.coalescer.take());
  }

  /** Forgets what is pending (nobody is listening). */
  drop(): void {
    if (!this.coalescer.empty) this.coalescer.take();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.closed || this.coalescer.empty) return;
      if (this.backlogged()) {
        this.schedule();
        return;
      }
      this.send(this.coalescer.take());
    }, FRAME_MS);
  }
}
