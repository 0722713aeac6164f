/**
 * @file Repacks quantized weights into `com.microsoft.MatMulNBits` layout without dequantizing them.
 * MatMulNBits computes y = A · dequant(B)ᵀ with B [N, nBlocks, blob] (codes packed low-nibble first
 * along K), scales [N·nBlocks] and optional zero points; value = (code − zeroPoint) · scale.
 * Each packer reproduces exactly the float32 values ggml's dequantize_row_* (our `dequantizeRows`) gives.
 */
import { f16ToF32, type Tensor } from '../model'

/** A weight in MatMulNBits form for a matrix of N output rows and K inputs. */
export interface NBitsWeight {
  readonly n: number
  readonly k: number
  readonly bits: 4 | 8
  readonly blockSize: number
  /** [N, K/blockSize, blockSize·bits/8] */
  readonly codes: Uint8Array
  /** [N · K/blockSize] */
  readonly scales: Float32Array
  /**
   * uint8 zero points [N · ceil(nBlocks·bits/8)] (4-bit ones packed two per byte, low nibble first),
   * or null for MatMulNBits' default 2^(bits−1).
   */
  readonly zeroPoints: Uint8Array | null
  /**
   * Q4_K only: per-block offsets (dmin·m − 8·d·sc) as a dense matrix [nBlocks, N] (already transposed
   * for MatMul), subtracted as blockSums(A) · minsT. Null for every other type.
   */
  readonly minsT: Float32Array | null
}

/** Rows and columns of a 2-D weight. */
function matrixDims(t: Tensor): { n: number; k: number } {
  if (t.shape.length !== 2) throw new Error(`${t.name}: expected a 2-D weight, got shape [${t.shape.join(', ')}]`)
  return { n: t.shape[0], k: t.shape[1] }
}

function requireBytes(t: Tensor, bytes: Uint8Array, needed: number): void {
  if (bytes.length < needed) throw new RangeError(`${t.name}: ${bytes.length} bytes of block data, shape needs ${needed}`)
}

/** IEEE half at byte p (little-endian) -> number. */
function f16At(b: Uint8Array, p: number): number {
  return f16ToF32(b[p] | (b[p + 1] << 8))
}

/** Q8_0 (34-byte blocks: f16 d, 32 × int8): codes q+128 with the default zero point 128. */
export function packQ8_0(t: Tensor, bytes: Uint8Array): NBitsWeight {
  const { n, k } = matrixDims(t)
  const nb = k / 32
  requireBytes(t, bytes, n * nb * 34)
  const codes = new Uint8Array(n * k)
  const scales = new Float32Array(n * nb)
  for (let b = 0; b < n * nb; b++) {
    const p = b * 34
    scales[b] = f16At(bytes, p)
    for (let j = 0; j < 32; j++) codes[b * 32 + j] = (bytes[p + 2 + j] + 128) & 255
  }
  return { n, k, bits: 8, blockSize: 32, codes, scales, zeroPoints: null, minsT: null }
}

/**
 * Q4_0 (18-byte blocks: f16 d, 16 bytes): GGUF keeps values 0..15 in the low nibbles and 16..31 in the
 * high nibbles of bytes 0..15; MatMulNBits wants values 2i and 2i+1 in byte i. Default zero point 8.
 */
export function packQ4_0(t: Tensor, bytes: Uint8Array): NBitsWeight {
  const { n, k } = matrixDims(t)
  const nb = k / 32
  requireBytes(t, bytes, n * nb * 18)
  const codes = new Uint8Array((n * k) / 2)
  const scales = new Float32Array(n * nb)
  const q = new Uint8Array(32)
  for (let b = 0; b < n * nb; b++) {
    const p = b * 18
    scales[b] = f16At(bytes, p)
    for (let j = 0; j < 16; j++) {
      q[j] = bytes[p + 2 + j] & 15
      q[j + 16] = bytes[p + 2 + j] >>> 4
    }
    for (let i = 0; i < 16; i++) codes[b * 16 + i] = q[2 * i] | (q[2 * i + 1] << 4)
  }
  return { n, k, bits: 4, blockSize: 32, codes, scales, zeroPoints: null, minsT: null }
}

/**
 * Q4_K (144-byte super-blocks of 256: f16 d, f16 dmin, 12 bytes of 6-bit scales/mins, 128 bytes of
 * nibbles): value = (d·sc)·q − (dmin·m) per 32-value sub-block. Codes are q with MatMulNBits' default
 * zero point 8 and scale d·sc, i.e. (d·sc)·(q − 8); the remaining per-block offset 8·d·sc − dmin·m goes
 * to `minsT` (subtracted as −(dmin·m − 8·d·sc)). No zero-point input: MLAS's int8 kernels are ~1.6×
 * faster without one, and centring q keeps the two terms from cancelling. (A float zero point
 * m·dmin/(d·sc) would fold it in, but ORT's CPU kernel then dequantizes B on every run — ~10× slower —
 * and it breaks when sc = 0.)
 */
export function packQ4_K(t: Tensor, bytes: Uint8Array): NBitsWeight {
  const { n, k } = matrixDims(t)
  const superPerRow = k / 256
  const nb = k / 32
  requireBytes(t, bytes, n * superPerRow * 144)
  const codes = new Uint8Array((n * k) / 2)
  const scales = new Float32Array(n * nb)
  const minsT = new Float32Array(nb * n)
  for (let row = 0; row < n; row++) {
    for (let s = 0; s < superPerRow; s++) {
      const p = (row * superPerRow + s) * 144
      const d = f16At(bytes, p)
      const dmin = f16At(bytes, p + 2)
      const sb = p + 4
      for (let j = 0; j < 8; j++) {
        // get_scale_min_k4: sub-blocks 0..3 keep 6 bits in bytes 0..7; 4..7 split 4 + 2 bits
        const sc = j < 4 ? bytes[sb + j] & 63 : (bytes[sb + j + 4] & 0xf) | ((bytes[sb + j - 4] >>> 6) << 4)
        const m = j < 4 ? bytes[sb + j + 4] & 63 : (bytes[sb + j + 4] >>> 4) | ((bytes[sb + j] >>> 6) << 4)
        const block = s * 8 + j
        const scale = Math.fround(d * sc)
        scales[row * nb + block] = scale
        minsT[block * n + row] = Math.fround(Math.fround(dmin * m) - 8 * scale)
        // sub-block j lives in qs[32·(j>>1) ...], low nibbles for even j, high for odd j
        const q = p + 16 + 32 * (j >>> 1)
        const shift = (j & 1) * 4
        const out = (row * nb + block) * 16
        for (let i = 0; i < 16; i++) {
          const lo = (bytes[q + 2 * i] >>> shift) & 15
          const hi = (bytes[q + 2 * i + 1] >>> shift) & 15
          codes[out + i] = lo | (hi << 4)
        }
      }
    }
  }
  return { n, k, bits: 4, blockSize: 32, codes, scales, zeroPoints: null, minsT }
}

/**
 * Q6_K (210-byte super-blocks of 256: ql[128], qh[64], int8 scales[16], f16 d): value =
 * (d·scale_g)·(q − 32) per 16-value group g. Codes are the 6-bit q as bytes, block 16, zero point 32.
 */
export function packQ6_K(t: Tensor, bytes: Uint8Array): NBitsWeight {
  const { n, k } = matrixDims(t)
  const superPerRow = k / 256
  const nb = k / 16
  requireBytes(t, bytes, n * superPerRow * 210)
  const codes = new Uint8Array(n * k)
  const scales = new Float32Array(n * nb)
  for (let row = 0; row < n; row++) {
    for (let s = 0; s < superPerRow; s++) {
      const p = (row * superPerRow + s) * 210
      const d = f16At(bytes, p + 208)
      for (let g = 0; g < 16; g++) scales[row * nb + s * 16 + g] = Math.fround(d * ((bytes[p + 192 + g] << 24) >> 24))
      const out = row * k + s * 256
      for (let half = 0; half < 2; half++) {
        const ql = p + 64 * half
        const qh = p + 128 + 32 * half
        const y = out + 128 * half
        for (let l = 0; l < 32; l++) {
          const h = bytes[qh + l]
          const a = bytes[ql + l]
          const c = bytes[ql + l + 32]
          codes[y + l] = (a & 0xf) | ((h & 3) << 4)
          codes[y + l + 32] = (c & 0xf) | (((h >>> 2) & 3) << 4)
          codes[y + l + 64] = (a >>> 4) | (((h >>> 4) & 3) << 4)
          codes[y + l + 96] = (c >>> 4) | (((h >>> 6) & 3) << 4)
        }
      }
    }
  }
  return { n, k, bits: 8, blockSize: 16, codes, scales, zeroPoints: new Uint8Array(n * nb).fill(32), minsT: null }
}

/** True when llama2.c int8 groups can become MatMulNBits blocks (power-of-two ≥ 16, whole groups per row). */
export function int8GroupsFitNBits(groupSize: number, k: number): boolean {
  return groupSize >= 16 && (groupSize & (groupSize - 1)) === 0 && k % groupSize === 0
}

/** llama2.c Q8_0 groups (int8 values + one f32 scale per group along the flat array): codes q+128. */
export function packInt8Groups(t: Tensor, values: Int8Array, groupScales: Float32Array, groupSize: number): NBitsWeight {
  const { n, k } = matrixDims(t)
  if (!int8GroupsFitNBits(groupSize, k)) throw new Error(`${t.name}: group size ${groupSize} does not fit MatMulNBits blocks`)
  const nb = k / groupSize
  if (values.length < n * k || groupScales.length < n * nb) throw new RangeError(`${t.name}: int8 group data too short`)
  const codes = new Uint8Array(n * k)
  for (let i = 0; i < n * k; i++) codes[i] = (values[i] + 128) & 255
  // groups never straddle rows here (k % groupSize == 0), so the flat scale order is already [N, nBlocks]
  const scales = groupScales.slice(0, n * nb)
  return { n, k, bits: 8, blockSize: groupSize, codes, scales, zeroPoints: null, minsT: null }
}

/** The MatMulNBits form of `t`, or null when it is dense or does not fit (then use a float MatMul). */
export function packNBits(t: Tensor): NBitsWeight | null {
  const d = t.data
  if (d.kind === 'dense') return null
  if (d.kind === 'int8-groups') {
    const { k } = matrixDims(t)
    // llama2.c allows any group size dividing the tensor; odd ones fall back to dense f32
    return int8GroupsFitNBits(d.groupSize, k) ? packInt8Groups(t, d.values, d.scales, d.groupSize) : null
  }
  switch (d.dtype) {
    case 'q8_0':
      return packQ8_0(t, d.bytes)
    case 'q4_0':
      return packQ4_0(t, d.bytes)
    case 'q4_k':
      return packQ4_K(t, d.bytes)
    case 'q6_k':
      return packQ6_K(t, d.bytes)
  }
}

/** Dequantizes an NBitsWeight back to float32 [N, K] (tests compare this with `dequantizeRows`). */
export function unpackNBits(w: NBitsWeight): Float32Array {
  const out = new Float32Array(w.n * w.k)
  const nb = w.k / w.blockSize
  const zpPerRow = Math.ceil((nb * w.bits) / 8)
  for (let row = 0; row < w.n; row++) {
    for (let b = 0; b < nb; b++) {
      const blk = row * nb + b
      const scale = w.scales[blk]
      let zp = 1 << (w.bits - 1)
      if (w.zeroPoints) {
        zp = w.bits === 8 ? w.zeroPoints[row * zpPerRow + b] : (w.zeroPoints[row * zpPerRow + (b >> 1)] >>> ((b & 1) * 4)) & 15
      }
      const min = w.minsT ? w.minsT[b * w.n + row] : 0
      for (let i = 0; i < w.blockSize; i++) {
        const code = w.bits === 8 ? w.codes[blk * w.blockSize + i] : (w.codes[blk * (w.blockSize / 2) + (i >> 1)] >>> ((i & 1) * 4)) & 15
        out[row * w.k + b * w.blockSize + i] = Math.fround((code - zp) * scale) - min
      }
    }
  }
  return out
}

/** Rows [start, end) of a packed weight (output features; every array is row-major in N, minsT column-wise). */
export function sliceNBitsRows(w: NBitsWeight, start: number, end: number): NBitsWeight {
  checkRange(w.n, start, end, 'rows')
  const nb = w.k / w.blockSize
  const blob = (w.blockSize * w.bits) / 8
  const zpPerRow = Math.ceil((nb * w.bits) / 8)
  const n = end - start
  let minsT: Float32Array | null = null
  if (w.minsT) {
    // [nBlocks, N] -> [nBlocks, n]
    minsT = new Float32Array(nb * n)
    for (let blk = 0; blk < nb; blk++) minsT.set(w.minsT.subarray(blk * w.n + start, blk * w.n + end), blk * n)
  }
  return {
    ...w,
    n,
    codes: w.codes.subarray(start * nb * blob, end * nb * blob),
    scales: w.scales.subarray(start * nb, end * nb),
    zeroPoints: w.zeroPoints ? w.zeroPoints.subarray(start * zpPerRow, end * zpPerRow) : null,
    minsT
  }
}

/**
 * Columns [start, end) of a packed weight (input features, MatMulNBits' K): whole blocks only, since
 * codes, scales and zero points are per block along K. Throws when the range cuts a block.
 */
export function sliceNBitsCols(w: NBitsWeight, start: number, end: number, name: string): NBitsWeight {
  checkRange(w.k, start, end, 'columns')
  if (start % w.blockSize !== 0 || end % w.blockSize !== 0) {
    throw new RangeError(
      `${name}: columns [${start}, ${end}) cut its ${w.blockSize}-wide quantization blocks; a column slice of a quantized ` +
        'weight must start and end on a block boundary (MatMulNBits stores codes, scales and its int8 input rounding per block along K)'
    )
  }
  const nb = w.k / w.blockSize
  const b0 = start / w.blockSize
  const b1 = end / w.blockSize
  const nbOut = b1 - b0
  const blob = (w.blockSize * w.bits) / 8
  const zpPerRow = Math.ceil((nb * w.bits) / 8)
  const zpPerRowOut = Math.ceil((nbOut * w.bits) / 8)
  const codes = new Uint8Array(w.n * nbOut * blob)
  const scales = new Float32Array(w.n * nbOut)
  const zeroPoints = w.zeroPoints ? new Uint8Array(w.n * zpPerRowOut) : null
  for (let row = 0; row < w.n; row++) {
    codes.set(w.codes.subarray((row * nb + b0) * blob, (row * nb + b1) * blob), row * nbOut * blob)
    scales.set(w.scales.subarray(row * nb + b0, row * nb + b1), row * nbOut)
    if (zeroPoints && w.zeroPoints) {
      for (let b = 0; b < nbOut; b++) {
        const src = b0 + b
        if (w.bits === 8) {
          zeroPoints[row * zpPerRowOut + b] = w.zeroPoints[row * zpPerRow + src]
        } else {
          // 4-bit zero points sit two per byte, low nibble first: repack from the new block index
          const zp = (w.zeroPoints[row * zpPerRow + (src >> 1)] >>> ((src & 1) * 4)) & 15
          zeroPoints[row * zpPerRowOut + (b >> 1)] |= zp << ((b & 1) * 4)
        }
      }
    }
  }
  return { ...w, k: end - start, codes, scales, zeroPoints, minsT: w.minsT ? w.minsT.subarray(b0 * w.n, b1 * w.n) : null }
}

function checkRange(size: number, start: number, end: number, what: string): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > size || start >= end) {
    throw new RangeError(`${what} [${start}, ${end}) is not a non-empty range inside [0, ${size})`)
  }
}
