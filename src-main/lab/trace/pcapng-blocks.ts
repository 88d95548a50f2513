// pcapng blocks (IETF draft-ietf-opsawg-pcapng): Section Header, Interface
// Description and Enhanced Packet. Written little-endian; the byte-order
// magic tells readers so.

export const BLOCK_SHB = 0x0a0d0d0a;
export const BLOCK_IDB = 0x00000001;
export const BLOCK_EPB = 0x00000006;
export const BYTE_ORDER_MAGIC = 0x1a2b3c4d;
/** Raw IPv4, no link-layer header (tcpdump.org link-layer header types). */
export const LINKTYPE_IPV4 = 228;

const OPT_ENDOFOPT = 0;
const OPT_COMMENT = 1;
const SHB_USERAPPL = 4;
const IF_NAME = 2;
const IF_TSRESOL = 9;

const pad4 = (n: number): number => (n + 3) & ~3;
const utf8 = new TextEncoder();

interface Option {
  code: number;
  value: Uint8Array;
}

function optionsLength(opts: Option[]): number {
  if (opts.length === 0) return 0;
  return opts.reduce((n, o) => n + 4 + pad4(o.value.length), 0) + 4;
}

function writeOptions(dv: DataView, bytes: Uint8Array, at: number, opts: Option[]): number {
  if (opts.length === 0) return at;
  for (const o of opts) {
    dv.setUint16(at, o.code, true);
    dv.setUint16(at + 2, o.value.length, true);
    bytes.set(o.value, at + 4);
    at += 4 + pad4(o.value.length);
  }
  dv.setUint16(at, OPT_ENDOFOPT, true);
  dv.setUint16(at + 2, 0, true);
  return at + 4;
}

/** A block: type, total length, body, options, total length again. */
function block(
  type: number,
  bodyLen: number,
  opts: Option[],
  fillBody: (dv: DataView, bytes: Uint8Array) => void,
): Uint8Array {
  const total = 12 + pad4(bodyLen) + optionsLength(opts);
  const bytes = new Uint8Array(total);
  const dv = new DataView(bytes.buffer);
  dv.setUint32(0, type, true);
  dv.setUint32(4, total, true);
  fillBody(new DataView(bytes.buffer, 8, bodyLen), bytes.subarray(8, 8 + bodyLen));
  writeOptions(dv, bytes, 8 + pad4(bodyLen), opts);
  dv.setUint32(total - 4, total, true);
  return bytes;
}

export function sectionHeaderBlock(userAppl: string): Uint8Array {
  return block(BLOCK_SHB, 16, [{ code: SHB_USERAPPL, value: utf8.encode(userAppl) }], (dv) => {
    dv.setUint32(0, BYTE_ORDER_MAGIC, true);
    dv.setUint16(4, 1, true);
    dv.setUint16(6, 0, true);
    // Section length -1: not specified (the writer streams).
    dv.setBigInt64(8, -1n, true);
  });
}

export function interfaceDescriptionBlock(linkType: number, snapLen: number, name: string): Uint8Array {
  const opts = [
    { code: IF_NAME, value: utf8.encode(name) },
    // 10^-6 s: microsecond timestamps (also the default, stated for clarity).
    { code: IF_TSRESOL, value: Uint8Array.of(6) },
  ];
  return block(BLOCK_IDB, 8, opts, (dv) => {
    dv.setUint16(0, linkType, true);
    dv.setUint16(2, 0, true);
    dv.setUint32(4, snapLen, true);
  });
}

export function enhancedPacketBlock(
  interfaceId: number,
  timestampUs: number,
  data: Uint8Array,
  origLen: number,
  comment?: string,
): Uint8Array {
  const opts = comment ? [{ code: OPT_COMMENT, value: utf8.encode(comment) }] : [];
  return block(BLOCK_EPB, 20 + data.length, opts, (dv, bytes) => {
    const ts = Math.max(0, Math.round(timestampUs));
    dv.setUint32(0, interfaceId, true);
    dv.setUint32(4, Math.floor(ts / 2 ** 32), true);
    dv.setUint32(8, ts % 2 ** 32, true);
    dv.setUint32(12, data.length, true);
    dv.setUint32(16, origLen, true);
    bytes.set(data, 20);
  });
}
