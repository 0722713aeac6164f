/**
 * @file Reading any Tensor as float32: dense f32/f16/bf16 (possibly unaligned bytes), ggml blocks
 * (q8_0, q4_0, q4_k, q6_k, decoded exactly as ggml's dequantize_row_*), and llama2.c int8 groups.
 * The reference forward and the runtime's embedding lookup both go through `dequantizeRows`.
 */
import { ggmlTypeByEncoding } from './ggml'
import type { BlockDType, DenseDType, Tensor, TensorData } from './types'

// Scratch for reinterpreting 32-bit patterns as float32 (single-threaded, so one shared pair is safe).
const scratchF32 = new Float32Array(1)
const scratchU32 = new Uint32Array(scratchF32.buffer)

// Reading f32/bf16 bytes straight into a Float32Array's memory assumes a little-endian host (x64 and
// arm64 Node always are); fail loudly rather than decode garbage on anything else.
if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) throw new Error('tensor.ts needs a little-endian host')

/** float32 bit pattern of every f16 value (65,536 × 4 bytes), so decoding is one lookup. */
const F16_TO_F32_BITS: Uint32Array = buildF16Table()

function buildF16Table(): Uint32Array {
  const table = new Uint32Array(65536)
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16
    const exp = (h >>> 10) & 0x1f
    let mant = h & 0x3ff
    if (exp === 0) {
      if (mant === 0) {
        table[h] = sign
        continue
      }
      // subnormal half: shift the mantissa up until its leading 1 is the implicit bit
      let e = 127 - 15 + 1
      while ((mant & 0x400) === 0) {
        mant <<= 1
        e--
      }
      table[h] = sign | (e << 23) | ((mant & 0x3ff) << 13)
    } else if (exp === 31) {
      table[h] = sign | 0x7f800000 | (mant << 13)
    } else {
      table[h] = sign | ((exp + 127 - 15) << 23) | (mant << 13)
    }
  }
  return table
}

/** The float32 bit pattern of every IEEE half bit pattern (read only): bulk conversions index it directly. */
export function f16ToF32BitsTable(): Readonly<Uint32Array> {
  return F16_TO_F32_BITS
}

/** IEEE half (as its 16-bit pattern) -> number; exact. */
export function f16ToF32(bits: number): number {
  scratchU32[0] = F16_TO_F32_BITS[bits & 0xffff]
  return scratchF32[0]
}

/** number -> IEEE half bit pattern, round to nearest even (ggml's GGML_FP32_TO_FP16). */
export function f32ToF16(value: number): number {
  scratchF32[0] = value
  const x = scratchU32[0]
  const sign = (x >>> 16) & 0x8000
  const exp = (x >>> 23) & 0xff
  let mant = x & 0x7fffff
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 : 0)
  const e = exp - 127 + 15
  if (e >= 0x1f) return sign | 0x7c00
  if (e <= 0) {
    // result is a half subnormal (or zero): 24-bit significand shifted right by 14 - e
    if (e < -10) return sign
    mant |= 0x800000
    const shift = 14 - e
    let h = mant >>> shift
    const rem = mant & ((1 << shift) - 1)
    const halfway = 1 << (shift - 1)
    if (rem > halfway || (rem === halfway && (h & 1) !== 0)) h++
    return sign | h
  }
  let h = (e << 10) | (mant >>> 13)
  const rem = mant & 0x1fff
  // a carry out of the mantissa bumps the exponent, which is exactly right (up to infinity)
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) !== 0)) h++
  return sign | h
}

/** bfloat16 bit pattern -> number; exact. */
export function bf16ToF32(bits: number): number {
  scratchU32[0] = (bits & 0xffff) << 16
  return scratchF32[0]
}

/** number -> bfloat16 bit pattern, round to nearest even, NaN kept quiet (ggml's GGML_FP32_TO_BF16). */
export function f32ToBf16(value: number): number {
  scratchF32[0] = value
  const x = scratchU32[0]
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 64) & 0xffff
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff
}

/** Number of values in a tensor (product of its shape; 1 for a scalar). */
export function tensorElementCount(t: Tensor): number {
  let n = 1
  for (const d of t.shape) n *= d
  return n
}

/** Rows when viewed as a matrix [rows, cols]: product of all but the innermost dimension (1 for 1-D). */
export function tensorRows(t: Tensor): number {
  let n = 1
  for (let i = 0; i < t.shape.length - 1; i++) n *= t.shape[i]
  return n
}

/** Columns when viewed as a matrix: the innermost dimension (1 for a scalar). */
export function tensorCols(t: Tensor): number {
  return t.shape.length === 0 ? 1 : t.shape[t.shape.length - 1]
}

/** The whole tensor as a new Float32Array (row-major, outer-first). */
export function tensorToFloat32(t: Tensor): Float32Array {
  const out = new Float32Array(tensorElementCount(t))
  dequantizeRows(t, 0, tensorRows(t), out, 0)
  return out
}

/**
 * Decodes rows [rowStart, rowStart + rowCount) of `t` (as a [rows, cols] matrix) into
 * out[outOffset .. outOffset + rowCount*cols).
 */
export function dequantizeRows(t: Tensor, rowStart: number, rowCount: number, out: Float32Array, outOffset = 0): void {
  const rows = tensorRows(t)
  const cols = tensorCols(t)
  if (!Number.isInteger(rowStart) || !Number.isInteger(rowCount) || rowStart < 0 || rowCount < 0 || rowStart + rowCount > rows) {
    throw new RangeError(`${t.name}: rows [${rowStart}, ${rowStart + rowCount}) outside [0, ${rows})`)
  }
  const n = rowCount * cols
  if (!Number.isInteger(outOffset) || outOffset < 0 || outOffset + n > out.length) {
    throw new RangeError(`${t.name}: output holds ${out.length} values, needs ${outOffset + n}`)
  }
  if (n === 0) return
  // a tensor still in its file reads only these rows (t.data would read all of it)
  if (t.rows !== undefined && rowCount < rows) return dequantizeRows(t.rows(rowStart, rowCount), 0, rowCount, out, outOffset)
  checkDataSize(t, rows, cols)
  const d = t.data
  if (d.kind === 'dense') {
    const start = rowStart * cols
    if (d.dtype === 'f32') {
      // byte copy: works for unaligned views (safetensors) and is a memcpy
      new Uint8Array(out.buffer, out.byteOffset + outOffset * 4, n * 4).set(d.bytes.subarray(start * 4, (start + n) * 4))
    } else {
      decode16(d.dtype, d.bytes, start * 2, n, out, outOffset)
    }
  } else if (d.kind === 'ggml') {
    const info = ggmlTypeByEncoding(d.dtype)
    const blocksPerRow = cols / info.blockElems
    const first = rowStart * blocksPerRow * info.blockBytes
    const blocks = rowCount * blocksPerRow
    const decode = BLOCK_DECODERS[d.dtype]
    for (let b = 0; b < blocks; b++) decode(d.bytes, first + b * info.blockBytes, out, outOffset + b * info.blockElems)
  } else {
    decodeInt8Groups(d.values, d.scales, d.groupSize, rowStart * cols, n, out, outOffset)
  }
}

/**
 * Bytes that `elements` values take in `dtype` (a dense type is blocks of one value), or null when they are not
 * a whole number of blocks. The one size rule for tensor data, rows of it and files' tensors.
 */
export function encodedByteLength(dtype: DenseDType | BlockDType, elements: number): number | null {
  const info = ggmlTypeByEncoding(dtype)
  return elements % info.blockElems === 0 ? (elements / info.blockElems) * info.blockBytes : null
}

/** Bytes a tensor's data takes, known from its shape and encoding without reading it. */
export function tensorByteLength(t: Tensor): number {
  const d = t.data
  const elements = tensorElementCount(t)
  if (d.kind === 'int8-groups') return elements * (1 + 4 / d.groupSize)
  const bytes = encodedByteLength(d.dtype, elements)
  if (bytes === null) throw new RangeError(`${t.name}: ${elements} values are not whole ${d.dtype} blocks`)
  return bytes
}

/** Bytes of one row of a 2-D tensor, or null when a row is not a whole number of blocks/groups (it cannot be sliced). */
export function tensorRowBytes(t: Tensor): number | null {
  const d = t.data
  const cols = tensorCols(t)
  if (d.kind === 'int8-groups') return cols % d.groupSize === 0 ? cols : null
  return encodedByteLength(d.dtype, cols)
}

/**
 * Rows [start, start + count) of a 2-D tensor as a tensor of their own: read from the file for a tensor still
 * in it (Tensor.rows), else views into its data. Null when a row is not a whole number of blocks/groups.
 */
export function sliceRows(t: Tensor, start: number, count: number): Tensor | null {
  const rows = tensorRows(t)
  const cols = tensorCols(t)
  if (!Number.isInteger(start) || !Number.isInteger(count) || start < 0 || count < 0 || start + count > rows) {
    throw new RangeError(`${t.name}: rows [${start}, ${start + count}) outside [0, ${rows})`)
  }
  if (t.rows !== undefined) return t.rows(start, count)
  const perRow = tensorRowBytes(t)
  if (perRow === null) return null
  const d = t.data
  const shape = [count, cols]
  if (d.kind === 'int8-groups') {
    const g = cols / d.groupSize
    return { name: t.name, shape, data: { ...d, values: d.values.subarray(start * cols, (start + count) * cols), scales: d.scales.subarray(start * g, (start + count) * g) } }
  }
  return { name: t.name, shape, data: { ...d, bytes: d.bytes.subarray(start * perRow, (start + count) * perRow) } }
}

/** Throws when the tensor's data is shorter than its shape needs (a loader bug, not a file problem). */
function checkDataSize(t: Tensor, rows: number, cols: number): void {
  const d: TensorData = t.data
  const elems = rows * cols
  let ok: boolean
  if (d.kind !== 'int8-groups') {
    // every row whole blocks, and at least the bytes the shape needs
    const perRow = encodedByteLength(d.dtype, cols)
    ok = perRow !== null && d.bytes.length >= perRow * rows
  } else {
    ok = d.groupSize > 0 && d.values.length >= elems && d.scales.length * d.groupSize >= elems
  }
  if (!ok) throw new RangeError(`${t.name}: ${d.kind} data too short for shape [${t.shape.join(', ')}]`)
}

/** f16 or bf16 little-endian values (any byte alignment) -> float32 bit patterns. */
function decode16(dtype: 'f16' | 'bf16', bytes: Uint8Array, byteStart: number, n: number, out: Float32Array, outOffset: number): void {
  const bits = new Uint32Array(out.buffer, out.byteOffset + outOffset * 4, n)
  let p = byteStart
  if (dtype === 'f16') {
    for (let i = 0; i < n; i++, p += 2) bits[i] = F16_TO_F32_BITS[bytes[p] | (bytes[p + 1] << 8)]
  } else {
    for (let i = 0; i < n; i++, p += 2) bits[i] = (bytes[p] | (bytes[p + 1] << 8)) << 16
  }
}

function decodeInt8Groups(
  values: Int8Array,
  scales: Float32Array,
  groupSize: number,
  start: number,
  n: number,
  out: Float32Array,
  outOffset: number
): void {
  let i = start
  const end = start + n
  while (i < end) {
    const g = Math.floor(i / groupSize)
    const groupEnd = Math.min(end, (g + 1) * groupSize)
    const s = scales[g]
    for (; i < groupEnd; i++) out[outOffset + i - start] = values[i] * s
  }
}

type BlockDecoder = (b: Uint8Array, p: number, out: Float32Array, o: number) => void

function f16At(b: Uint8Array, p: number): number {
  scratchU32[0] = F16_TO_F32_BITS[b[p] | (b[p + 1] << 8)]
  return scratchF32[0]
}

/** Q8_0: f16 d, then 32 int8 q; y = q·d. */
function decodeQ8_0(b: Uint8Array, p: number, out: Float32Array, o: number): void {
  const d = f16At(b, p)
  for (let j = 0; j < 32; j++) out[o + j] = ((b[p + 2 + j] << 24) >> 24) * d
}

/** Q4_0: f16 d, then 16 bytes; low nibbles are values 0..15, high nibbles values 16..31; y = (q-8)·d. */
function decodeQ4_0(b: Uint8Array, p: number, out: Float32Array, o: number): void {
  const d = f16At(b, p)
  for (let j = 0; j < 16; j++) {
    const q = b[p + 2 + j]
    out[o + j] = ((q & 15) - 8) * d
    out[o + j + 16] = ((q >>> 4) - 8) * d
  }
}

/**
 * Q4_K: f16 d, f16 dmin, 12 bytes packing eight 6-bit (scale, min) pairs, 128 bytes of nibbles.
 * Sub-block j of 32 values: y = d·sc_j·q - dmin·m_j. Each 32-byte run of qs holds sub-block 2k in
 * its low nibbles and 2k+1 in its high nibbles.
 */
function decodeQ4_K(b: Uint8Array, p: number, out: Float32Array, o: number): void {
  const d = f16At(b, p)
  const dmin = f16At(b, p + 2)
  const s = p + 4
  for (let k = 0; k < 4; k++) {
    const j0 = 2 * k
    const j1 = j0 + 1
    // get_scale_min_k4: sub-blocks 0..3 keep 6 bits in bytes 0..7; 4..7 split 4+2 bits
    const sc0 = j0 < 4 ? b[s + j0] & 63 : (b[s + j0 + 4] & 0xf) | ((b[s + j0 - 4] >>> 6) << 4)
    const m0 = j0 < 4 ? b[s + j0 + 4] & 63 : (b[s + j0 + 4] >>> 4) | ((b[s + j0] >>> 6) << 4)
    const sc1 = j1 < 4 ? b[s + j1] & 63 : (b[s + j1 + 4] & 0xf) | ((b[s + j1 - 4] >>> 6) << 4)
    const m1 = j1 < 4 ? b[s + j1 + 4] & 63 : (b[s + j1 + 4] >>> 4) | ((b[s + j1] >>> 6) << 4)
    // ggml computes d*sc and dmin*m in float32 before use
    const d0 = Math.fround(d * sc0)
    const mm0 = Math.fround(dmin * m0)
    const d1 = Math.fround(d * sc1)
    const mm1 = Math.fround(dmin * m1)
    const q = p + 16 + 32 * k
    const y = o + 64 * k
    for (let l = 0; l < 32; l++) {
      const v = b[q + l]
      out[y + l] = Math.fround(d0 * (v & 15)) - mm0
      out[y + 32 + l] = Math.fround(d1 * (v >>> 4)) - mm1
    }
  }
}

/**
 * Q6_K: 128 bytes low nibbles (ql), 64 bytes high 2-bit pairs (qh), 16 int8 scales, f16 d.
 * Each 128-value half uses 64 ql, 32 qh and 8 scales; y = d·scale·(q - 32) per 16-value group.
 */
function decodeQ6_K(b: Uint8Array, p: number, out: Float32Array, o: number): void {
  const d = f16At(b, p + 208)
  for (let half = 0; half < 2; half++) {
    const ql = p + 64 * half
    const qh = p + 128 + 32 * half
    const sc = p + 192 + 8 * half
    const y = o + 128 * half
    for (let l = 0; l < 32; l++) {
      const is = l >>> 4
      const h = b[qh + l]
      const a = b[ql + l]
      const c = b[ql + l + 32]
      const q1 = ((a & 0xf) | ((h & 3) << 4)) - 32
      const q2 = ((c & 0xf) | (((h >>> 2) & 3) << 4)) - 32
      const q3 = ((a >>> 4) | (((h >>> 4) & 3) << 4)) - 32
      const q4 = ((c >>> 4) | (((h >>> 6) & 3) << 4)) - 32
      out[y + l] = Math.fround(d * ((b[sc + is] << 24) >> 24)) * q1
      out[y + l + 32] = Math.fround(d * ((b[sc + is + 2] << 24) >> 24)) * q2
      out[y + l + 64] = Math.fround(d * ((b[sc + is + 4] << 24) >> 24)) * q3
      out[y + l + 96] = Math.fround(d * ((b[sc + is + 6] << 24) >> 24)) * q4
    }
  }
}

const BLOCK_DECODERS: Readonly<Record<'q8_0' | 'q4_0' | 'q4_k' | 'q6_k', BlockDecoder>> = {
  q8_0: decodeQ8_0,
  q4_0: decodeQ4_0,
  q4_k: decodeQ4_K,
  q6_k: decodeQ6_K
}
