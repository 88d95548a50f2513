// Strict UTF-8 for bincode strings. Written out because src-shared is typed
// without DOM or Node libs (no TextEncoder/TextDecoder types); the decoder
// rejects what Rust's String::from_utf8 rejects (overlongs, surrogates, > U+10FFFF).
import { WireError } from './errors';

export function utf8Encode(s: string): Uint8Array {
  const out: number[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    // Lone surrogates become U+FFFD, as TextEncoder does.
    const c = cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return Uint8Array.from(out);
}

export function utf8Decode(b: Uint8Array): string {
  let s = '';
  let i = 0;
  const bad = (): never => {
    throw new WireError('BAD_PAYLOAD', `string is not valid UTF-8 (byte ${i})`);
  };
  const cont = (k: number): number => {
    const x = b[i + k];
    if (x === undefined || (x & 0xc0) !== 0x80) bad();
    return x & 63;
  };
  while (i < b.length) {
    const x = b[i];
    let cp: number;
    let n: number;
    if (x < 0x80) {
      cp = x;
      n = 1;
    } else if (x >= 0xc2 && x < 0xe0) {
      cp = ((x & 31) << 6) | cont(1);
      n = 2;
    } else if (x >= 0xe0 && x < 0xf0) {
      cp = ((x & 15) << 12) | (cont(1) << 6) | cont(2);
      if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)) bad();
      n = 3;
    } else if (x >= 0xf0 && x < 0xf5) {
      cp = ((x & 7) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
      if (cp < 0x10000 || cp > 0x10ffff) bad();
      n = 4;
    } else {
      return bad();
    }
    s += String.fromCodePoint(cp);
    i += n;
  }
  return s;
}

/**
 * Where Rust's `str::from_utf8` stops on `b`: null when valid, else its
 * Utf8Error fields (`valid_up_to`, and `error_len` = null for an input that
 * ends inside a sequence, else the length of the invalid sequence, 1 to 3),
 * computed with core's rules (first-byte width table, the narrowed second-byte
 * ranges after E0, ED, F0 and F4), so bincode's Utf8 error text can be
 * reproduced exactly.
 */
export function rustUtf8Error(b: Uint8Array): { validUpTo: number; errorLen: number | null } | null {
  let i = 0;
  const isCont = (x: number | undefined) => x !== undefined && (x & 0xc0) === 0x80;
  while (i < b.length) {
    const x = b[i];
    if (x < 0x80) {
      i++;
      continue;
    }
    const width = x >= 0xc2 && x <= 0xdf ? 2 : x >= 0xe0 && x <= 0xef ? 3 : x >= 0xf0 && x <= 0xf4 ? 4 : 0;
    if (width === 0) return { validUpTo: i, errorLen: 1 };
    const second = b[i + 1];
    if (second === undefined) return { validUpTo: i, errorLen: null };
    const [lo, hi] =
      x === 0xe0
        ? [0xa0, 0xbf]
        : x === 0xed
          ? [0x80, 0x9f]
          : x === 0xf0
            ? [0x90, 0xbf]
            : x === 0xf4
              ? [0x80, 0x8f]
              : [0x80, 0xbf];
    if (second < lo || second > hi) return { validUpTo: i, errorLen: 1 };
    for (let k = 2; k < width; k++) {
      const y = b[i + k];
      if (y === undefined) return { validUpTo: i, errorLen: null };
      if (!isCont(y)) return { validUpTo: i, errorLen: k };
    }
    i += width;
  }
  return null;
}
