// The fold kernel's WebAssembly module, written out opcode by opcode (no
// toolchain needed): in-place f32x4 adds of f32 and bf16 payloads, the bf16
// RNE encoder, and the merge's k-way sums (sum_f32, sum_bf16) that add k
// staged sources from +0.0 in order and store the f32 sums or their bf16 bits
// in one pass.
/* The module, in WebAssembly binary format:
 *   (import "env" "memory" (memory 1))
 *   (func (export "add_f32") (param $acc i32) (param $src i32) (param $n i32)   ;; n % 4 == 0
 *     (local $end i32)  end = acc + n*4
 *     loop: while acc < end: v128.store(acc, f32x4.add(v128.load(acc), v128.load(src))); acc += 16; src += 16
 *   (func (export "add_bf16") ... same, with src lanes = i32x4.shl(v128.load16x4_u(src), 16); src += 8
 */
const I32 = 0x7f;
const GET = 0x20;
const SET = 0x21;
const CONST = 0x41;
const ADD = 0x6a;
const SIMD = 0xfd;
const V128_LOAD = [SIMD, 0x00, 0x04, 0x00]; // align 16, offset 0
const V128_LOAD16X4_U = [SIMD, 0x04, 0x03, 0x00]; // align 8, offset 0
const V128_STORE = [SIMD, 0x0b, 0x04, 0x00];
const F32X4_ADD = [SIMD, 0xe4, 0x01];
const I32X4_SHL = [SIMD, 0xab, 0x01];

function body(loadSrc: number[], srcStep: number, accTransform: number[] = []): number[] {
  // prettier-ignore
  const code = [
    0x01, 0x01, I32, // one local: $end
    GET, 0, GET, 2, CONST, 2, 0x74 /* i32.shl */, ADD, SET, 3,
    0x02, 0x40, // block
    0x03, 0x40, // loop
    GET, 0, GET, 3, 0x4f /* i32.ge_u */, 0x0d, 1, // br_if 1 (exit)
    GET, 0, // store address
    GET, 0, ...V128_LOAD, ...accTransform,
    GET, 1, ...loadSrc,
    ...F32X4_ADD,
    ...V128_STORE,
    GET, 0, CONST, 16, ADD, SET, 0,
    GET, 1, CONST, srcStep, ADD, SET, 1,
    0x0c, 0, // br 0 (loop)
    0x0b, 0x0b, 0x0b, // end loop, end block, end func
  ];
  return [...leb(code.length), ...code];
}

/** Unsigned LEB128, the format of every size in a module. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

function section(id: number, content: number[]): number[] {
  return [id, ...leb(content.length), ...content];
}

const name = (s: string) => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];

const V128_CONST_ZERO = [SIMD, 0x0c, ...new Array<number>(16).fill(0)];
/* (func (export "enc_bf16") (param $src i32) (param $dst i32) (param $n i32)   ;; n % 8 == 0
 *   bf16 bits of 8 f32 sums per step, as f32BitsToBf16Bits: for each lane v,
 *   NaN (v & 0x7fffffff > 0x7f800000) ? (v >> 16) | 0x40 : (v + 0x7fff + ((v >> 16) & 1)) >> 16,
 *   then the two i32x4 halves narrowed (unsigned) to one i16x8 and stored. */
const splat32 = (x: number) => [
  SIMD,
  0x0c,
  ...Array.from({ length: 16 }, (_, i) => (x >>> (8 * (i & 3))) & 0xff),
];
const I32X4_SHR_U = [SIMD, 0xad, 0x01];
const I32X4_ADD = [SIMD, 0xae, 0x01];
const V128_AND = [SIMD, 0x4e];
const V128_OR = [SIMD, 0x50];
const V128_BITSELECT = [SIMD, 0x52];
const F32X4_NE = [SIMD, 0x42];
const I16X8_NARROW_I32X4_U = [SIMD, 0x86, 0x01];
// prettier-ignore
const rneLanesOf = (V: number) => [
  SET, V,
  GET, V, CONST, 16, ...I32X4_SHR_U, ...splat32(0x40), ...V128_OR, // quiet NaN
  GET, V, ...splat32(0x7fff), ...I32X4_ADD, GET, V, CONST, 16, ...I32X4_SHR_U, ...splat32(1), ...V128_AND, ...I32X4_ADD, CONST, 16, ...I32X4_SHR_U, // RNE
  GET, V, GET, V, ...F32X4_NE, // is NaN (the only value unequal to itself)
  ...V128_BITSELECT,
];
const rneLanes = rneLanesOf(4); // enc_bf16's v128 local
function encodeBody(): number[] {
  // prettier-ignore
  const code = [
    0x02, 0x01, I32, 0x01, 0x7b, // locals: $end i32, $v v128
    GET, 0, GET, 2, CONST, 2, 0x74 /* i32.shl */, ADD, SET, 3,
    0x02, 0x40, 0x03, 0x40, // block, loop
    GET, 0, GET, 3, 0x4f /* i32.ge_u */, 0x0d, 1,
    GET, 1, // store address
    GET, 0, SIMD, 0x00, 0x04, 0x00, ...rneLanes,
    GET, 0, SIMD, 0x00, 0x04, 0x10, ...rneLanes,
    ...I16X8_NARROW_I32X4_U,
    ...V128_STORE,
    GET, 0, CONST, 32, ADD, SET, 0,
    GET, 1, CONST, 16, ADD, SET, 1,
    0x0c, 0,
    0x0b, 0x0b, 0x0b,
  ];
  return [...leb(code.length), ...code];
}

const f32Body = body(V128_LOAD, 16);
/** (acc + 0) + src: the first add onto a verbatim seed (-0.0 becomes +0.0 as in flodl's promotion). */
const f32FromZeroBody = body(V128_LOAD, 16, [...V128_CONST_ZERO, ...F32X4_ADD]);
const bf16Body = body([...V128_LOAD16X4_U, CONST, 16, ...I32X4_SHL], 8);

/* The merge's k-way sums, one body generator for both dtypes and both ways to find the sources:
 *   strided, type 1: (param $dst i32) (param $base i32) (param $stride i32) (param $k i32) (param $n i32):
 *     source j's block is at base + j*stride (every source copied into its slot);
 *   table, type 2: (param $dst i32) (param $table i32) (param $k i32) (param $n i32):
 *     source j's elements start at the i32 address table[j] (any alignment): a source read in place
 *     where the socket put it (the receive arena), or a slot it was copied into.
 * For each group of lanes:
 *   f32  (n % 4 == 0): acc = +0.0; acc = f32x4.add(acc, v128.load(src_j)) for j = 0..k-1; v128.store(dst, acc)
 *   bf16 (n % 8 == 0): the same over two f32x4 halves of widened bf16 lanes, then the two halves'
 *     bf16 bits (enc_bf16's RNE) narrowed into one i16x8 and stored: one pass, no f32 sums kept. */
const I32_EQZ = 0x45;
const I32_SUB = 0x6b;
const I32_LOAD = [0x28, 0x02, 0x00]; // align 4, offset 0
const V128_LOAD16X4_U_AT8 = [SIMD, 0x04, 0x03, 0x08]; // align 8, offset 8
function sumsBody(addressing: 'strided' | 'table', dtype: 'f32' | 'bf16'): number[] {
  const table = addressing === 'table';
  // Locals after the params: $end, the walking source pointer or table slot, $j (and, table, $off and $a), then v128s.
  const [END, P, J] = table ? [4, 6, 7] : [5, 6, 7];
  const [OFF, A] = [5, 8]; // table only
  const V = table ? 9 : 8;
  const N = table ? 3 : 4;
  const K = table ? 2 : 3;
  const bf16 = dtype === 'bf16';
  const addr = table ? [GET, A] : [GET, P];
  const widened = (acc: number, load: number[]) => [
    GET,
    acc,
    ...addr,
    ...load,
    CONST,
    16,
    ...I32X4_SHL,
    ...F32X4_ADD,
    SET,
    acc,
  ];
  const perSource = bf16
    ? [...widened(V, V128_LOAD16X4_U), ...widened(V + 1, V128_LOAD16X4_U_AT8)]
    : [GET, V, ...addr, ...V128_LOAD, ...F32X4_ADD, SET, V];
  const store = bf16
    ? [GET, V, ...rneLanesOf(V + 2), GET, V + 1, ...rneLanesOf(V + 2), ...I16X8_NARROW_I32X4_U]
    : [GET, V];
  const zeros = bf16
    ? [...V128_CONST_ZERO, SET, V, ...V128_CONST_ZERO, SET, V + 1]
    : [...V128_CONST_ZERO, SET, V];
  // prettier-ignore
  const code = [
    0x02, table ? 0x05 : 0x03, I32, bf16 ? 0x03 : 0x01, 0x7b,
    GET, 0, GET, N, CONST, bf16 ? 1 : 2, 0x74 /* i32.shl */, ADD, SET, END, // end = dst + output bytes
    ...(table ? [CONST, 0, SET, OFF] : []),
    0x02, 0x40, 0x03, 0x40, // block, loop (one group of lanes per turn)
    GET, 0, GET, END, 0x4f /* i32.ge_u */, 0x0d, 1,
    ...zeros,
    GET, 1, SET, P, GET, K, SET, J,
    0x02, 0x40, 0x03, 0x40, // block, loop (the k sources, in order)
    GET, J, I32_EQZ, 0x0d, 1,
    ...(table ? [GET, P, ...I32_LOAD, GET, OFF, ADD, SET, A] : []), // a = table[j] + off
    ...perSource,
    ...(table ? [GET, P, CONST, 4, ADD, SET, P] : [GET, P, GET, 2, ADD, SET, P]), // next table slot / next source
    GET, J, CONST, 1, I32_SUB, SET, J,
    0x0c, 0,
    0x0b, 0x0b,
    GET, 0, ...store, ...V128_STORE,
    GET, 0, CONST, 16, ADD, SET, 0,
    // 16 source bytes per turn (4 f32 or 8 bf16)
    ...(table ? [GET, OFF, CONST, 16, ADD, SET, OFF] : [GET, 1, CONST, 16, ADD, SET, 1]),
    0x0c, 0,
    0x0b, 0x0b, 0x0b,
  ];
  return [...leb(code.length), ...code];
}
const sumF32Body = sumsBody('strided', 'f32');
const sumBf16Body = sumsBody('strided', 'bf16');
const sumF32TableBody = sumsBody('table', 'f32');
const sumBf16TableBody = sumsBody('table', 'bf16');

/* sum_bf16_kK, type 0: (param $dst i32) (param $table i32) (param $n i32), K = 1..8 sources:
 * sum_bf16_t with the K addresses read from the table once into locals and the sources unrolled, and
 * each source's 8 bf16 lanes loaded at once and widened by interleaving their 16-bit halves with zeros
 * (a bf16 is the top half of its f32): the bf16 fold is compute-bound, and the generic loop spent
 * as much on walking the table as on the adds. */
const I8X16_SHUFFLE = [SIMD, 0x0d];
const WIDEN_LOW = [0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23]; // zero words under bf16 lanes 0-3
const WIDEN_HIGH = [8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31]; // ... lanes 4-7
export const BF16_UNROLLED_MAX = 8;
function bf16UnrolledBody(k: number): number[] {
  // locals: $end 3, $off 4, $p0.. 5..4+k (i32); $lo, $hi, $x after them (v128)
  const P = 5;
  const [LO, HI, X] = [P + k, P + k + 1, P + k + 2];
  const widenAdd = (acc: number, lanes: number[]) => [
    GET,
    acc,
    ...V128_CONST_ZERO,
    GET,
    X,
    ...I8X16_SHUFFLE,
    ...lanes,
    ...F32X4_ADD,
    SET,
    acc,
  ];
  const sources: number[] = [];
  for (let j = 0; j < k; j++)
    sources.push(
      GET,
      P + j,
      GET,
      4,
      ADD,
      ...V128_LOAD,
      SET,
      X,
      ...widenAdd(LO, WIDEN_LOW),
      ...widenAdd(HI, WIDEN_HIGH),
    );
  const loadTable: number[] = [];
  for (let j = 0; j < k; j++) loadTable.push(GET, 1, 0x28, 0x02, ...leb(4 * j), SET, P + j); // p_j = table[j]
  // prettier-ignore
  const code = [
    0x02, 2 + k, I32, 0x03, 0x7b,
    GET, 0, GET, 2, CONST, 1, 0x74 /* i32.shl */, ADD, SET, 3, // end = dst + n * 2
    ...loadTable,
    0x02, 0x40, 0x03, 0x40,
    GET, 0, GET, 3, 0x4f /* i32.ge_u */, 0x0d, 1,
    ...V128_CONST_ZERO, SET, LO, ...V128_CONST_ZERO, SET, HI,
    ...sources,
    GET, 0, GET, LO, ...rneLanesOf(LO), GET, HI, ...rneLanesOf(HI), ...I16X8_NARROW_I32X4_U, ...V128_STORE,
    GET, 0, CONST, 16, ADD, SET, 0,
    GET, 4, CONST, 16, ADD, SET, 4,
    0x0c, 0,
    0x0b, 0x0b, 0x0b,
  ];
  return [...leb(code.length), ...code];
}
const bf16Unrolled = Array.from({ length: BF16_UNROLLED_MAX }, (_, i) => bf16UnrolledBody(i + 1));
const bf16UnrolledNames = bf16Unrolled.flatMap((_, i) => [...name(`sum_bf16_k${i + 1}`), 0x00, 8 + i]);

// prettier-ignore
export const FOLD_WASM_BYTES = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  ...section(1, [0x03, 0x60, 0x03, I32, I32, I32, 0x00, 0x60, 0x05, I32, I32, I32, I32, I32, 0x00, 0x60, 0x04, I32, I32, I32, I32, 0x00]), // type 0: (i32 i32 i32) -> (), type 1: (i32 x 5) -> (), type 2: (i32 x 4) -> ()
  ...section(2, [0x01, ...name('env'), ...name('memory'), 0x02, 0x00, 0x01]), // import env.memory, at least 1 page
  ...section(3, [8 + BF16_UNROLLED_MAX, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x02, ...bf16Unrolled.map(() => 0x00)]), // four functions of type 0, two of type 1, two of type 2, the unrolled ones of type 0
  ...section(7, [8 + BF16_UNROLLED_MAX, ...bf16UnrolledNames, ...name('add_f32'), 0x00, 0x00, ...name('add_bf16'), 0x00, 0x01, ...name('add_f32_z'), 0x00, 0x02, ...name('enc_bf16'), 0x00, 0x03, ...name('sum_f32'), 0x00, 0x04, ...name('sum_bf16'), 0x00, 0x05, ...name('sum_f32_t'), 0x00, 0x06, ...name('sum_bf16_t'), 0x00, 0x07]),
  ...section(10, [8 + BF16_UNROLLED_MAX, ...f32Body, ...bf16Body, ...f32FromZeroBody, ...encodeBody(), ...sumF32Body, ...sumBf16Body, ...sumF32TableBody, ...sumBf16TableBody, ...bf16Unrolled.flat()]),
]);
