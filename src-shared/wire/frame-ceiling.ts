// flodl's frame ceiling as a value a role owns (WIRE.md 3.8): unset means the
// 1 GiB default; the first non-zero install wins and 0 is ignored. flodl keeps
// one per process; the lab runs several roles in one process, so each role
// holds its own instance and passes `value` to its readers and decoders.
import { DEFAULT_FRAME_CEILING, deriveFrameCeiling } from './constants';

export class FrameCeiling {
  private installed: number | null = null;

  /** Installs `bytes` unless a ceiling is already installed or `bytes` is 0. Returns whether it took effect. */
  install(bytes: number): boolean {
    if (this.installed !== null || !(bytes > 0)) return false;
    this.installed = Math.floor(bytes);
    return true;
  }

  /** Installs derive_frame_ceiling(modelBytes): max(2 x model bytes, 64 MiB). */
  installForModel(modelBytes: number): boolean {
    return this.install(deriveFrameCeiling(modelBytes));
  }

  get value(): number {
    return this.installed ?? DEFAULT_FRAME_CEILING;
  }

  get isSet(): boolean {
    return this.installed !== null;
  }
}
