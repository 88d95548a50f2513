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
