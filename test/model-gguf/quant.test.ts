/**
 * Tensor encodings: hand-built blocks (packed here from the format descriptions, independent of the
 * decoder) decode to their known values; quantize -> dequantize stays within each format's error bound;
 * f16/bf16 conversions; unaligned dense bytes; int8 groups; row slices.
 */
import { describe, expect, it } from 'vitest'
import { bf16ToF32, dequantizeRows, f16ToF32, f32ToBf16, f32ToF16, tensorToFloat32 } from '../../main/engine/model/tensor'
import type { Tensor, TensorData } from '../../main/engine/model/types'
import { encodeTensor } from '../fixtures/quantize'
import { Rng } from '../fixtures/rng'

const tensor = (shape: number[], data: TensorData): Tensor => ({ name: 'test', shape, data })

function putF16(b: Uint8Array, p: number, v: number): void {
  const h = f32ToF16(v)
  b[p] = h & 0xff
  b[p + 1] = h >>> 8
}

describe('f16 / bf16 scalars', () => {
  it('round-trips every finite f16 exactly and rounds to nearest even', () => {
    const mismatches: number[] = []
    for (let h = 0; h < 0x10000; h++) {
      const v = f16ToF32(h)
      if (!Number.isNaN(v) && f32ToF16(v) !== h) mismatches.push(h)
    }
    expect(mismatches).toEqual([])
    expect(f16ToF32(0x3c00)).toBe(1)
    expect(f16ToF32(0xc000)).toBe(-2)
    expect(f16ToF32(0x0001)).toBe(2 ** -24)
    expect(f16ToF32(0x7bff)).toBe(65504)
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00) // tie -> even (down)
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02) // tie -> even (up)
    expect(f32ToF16(70000)).toBe(0x7c00)
    expect(f32ToF16(2 ** -26)).toBe(0) // below half the smallest subnormal
    expect(Number.isNaN(f16ToF32(f32ToF16(NaN)))).toBe(true)
  })

  it('converts bf16 both ways', () => {
    expect(bf16ToF32(0x3f80)).toBe(1)
    expect(bf16ToF32(0xc040)).toBe(-3)
    expect(f32ToBf16(1)).toBe(0x3f80)
    expect(f32ToBf16(1 + 2 ** -8)).toBe(0x3f80) // tie -> even
    expect(f32ToBf16(1 + 3 * 2 ** -8)).toBe(0x3f82)
    expect(Number.isNaN(bf16ToF32(f32ToBf16(NaN)))).toBe(true)
  })
})

describe('hand-built blocks decode to their known values', () => {
  const rng = new Rng(7)

  it('q8_0: y = q·d', () => {
    const b = new Uint8Array(2 * 34)
    const expected: number[] = []
    for (let blk = 0; blk < 2; blk++) {
      const d = blk === 0 ? 0.5 : -0.125
      putF16(b, blk * 34, d)
      for (let j = 0; j < 32; j++) {
        const q = rng.int(256) - 128
        b[blk * 34 + 2 + j] = q & 0xff
        expected.push(q * d)
      }
    }
    expect(Array.from(tensorToFloat32(tensor([64], { kind: 'ggml', dtype: 'q8_0', bytes: b })))).toEqual(expected)
  })

  it('q4_0: low nibbles are values 0..15, high nibbles 16..31, y = (q-8)·d', () => {
    const b = new Uint8Array(18)
    putF16(b, 0, 2)
    const q = Array.from({ length: 32 }, () => rng.int(16))
    for (let j = 0; j < 16; j++) b[2 + j] = q[j] | (q[j + 16] << 4)
    expect(Array.from(tensorToFloat32(tensor([32], { kind: 'ggml', dtype: 'q4_0', bytes: b })))).toEqual(q.map((v) => (v - 8) * 2))
  })

  it('q4_k: 6-bit scale/min pairs, y = d·sc·q − dmin·m', () => {
    const d = 0.25
    const dmin = 0.5
    const sc = [1, 2, 3, 63, 20, 33, 47, 60]
    const mn = [0, 5, 63, 7, 17, 40, 1, 63]
    const b = new Uint8Array(144)
    putF16(b, 0, d)
    putF16(b, 2, dmin)
    // scales[0..3] = sc 0..3 (+ high 2 bits of sc 4..7); scales[4..7] = mn 0..3 (+ high bits of mn 4..7);
    // scales[8..11] = low nibble sc 4..7 | low nibble mn 4..7 << 4
    for (let j = 0; j < 4; j++) {
      b[4 + j] = sc[j] | ((sc[j + 4] >> 4) << 6)
      b[4 + 4 + j] = mn[j] | ((mn[j + 4] >> 4) << 6)
      b[4 + 8 + j] = (sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4)
    }
    const q = Array.from({ length: 256 }, () => rng.int(16))
    const expected: number[] = []
    for (let e = 0; e < 256; e++) {
      const chunk = e >> 6 // 64 values per 32 bytes of qs
      const within = e & 63
      const j = 2 * chunk + (within >= 32 ? 1 : 0)
      const byte = 16 + 32 * chunk + (within & 31)
      if (within < 32) b[byte] = (b[byte] & 0xf0) | q[e]
      else b[byte] = (b[byte] & 0x0f) | (q[e] << 4)
      expected.push(Math.fround(Math.fround(d * sc[j]) * q[e]) - Math.fround(dmin * mn[j]))
    }
    const got = tensorToFloat32(tensor([256], { kind: 'ggml', dtype: 'q4_k', bytes: b }))
    expect(Array.from(got)).toEqual(Array.from(Float32Array.from(expected)))
  })

  it('q6_k: ql nibbles + qh 2-bit pairs, int8 scales per 16 values, y = d·sc·(q − 32)', () => {
    const d = 0.0625
    const b = new Uint8Array(210)
    putF16(b, 208, d)
    const scales = Array.from({ length: 16 }, () => rng.int(256) - 128)
    scales.forEach((s, i) => (b[192 + i] = s & 0xff))
    const q = Array.from({ length: 256 }, () => rng.int(64))
    const expected: number[] = []
    for (let e = 0; e < 256; e++) {
      const half = e >> 7 // each 128 values: 64 ql bytes, 32 qh bytes, 8 scales
      const r = e & 127
      const group = r >> 5 // 0..3: which 32-value quarter
      const l = r & 31
      const qlByte = 64 * half + l + (group & 1 ? 32 : 0)
      if (group < 2) b[qlByte] = (b[qlByte] & 0xf0) | (q[e] & 15)
      else b[qlByte] = (b[qlByte] & 0x0f) | ((q[e] & 15) << 4)
      const qhByte = 128 + 32 * half + l
      b[qhByte] |= (q[e] >> 4) << (2 * group)
      const s = scales[8 * half + (l >> 4) + 2 * group]
      expected.push(Math.fround(d * s) * (q[e] - 32))
    }
    const got = tensorToFloat32(tensor([256], { kind: 'ggml', dtype: 'q6_k', bytes: b }))
    expect(Array.from(got)).toEqual(Array.from(Float32Array.from(expected)))
  })
})

/** Max |error| per block allowed, from the block's own values (see each format's comment). */
const BOUNDS: ReadonlyArray<[ 'q8_0' | 'q4_0' | 'q4_k' | 'q6_k', number, (block: Float32Array) => number]> = [
  // half a step of amax/127, plus f16 rounding of d times |q| ≤ 127 (2^-11 relative)
  ['q8_0', 32, (x) => (amax(x) / 127) * (0.5 + 127 * 2 ** -11) + 1e-12],
  // step amax/8; the value opposite the max clamps from +8 to +7, so up to one full step
  ['q4_0', 32, (x) => (amax(x) / 8) * (1 + 2 ** -10) + 1e-12],
  // 15 steps over a sub-block's range; half a step plus 6-bit scale/min rounding stays within one step
  ['q4_k', 256, (x) => range(x) / 15 + 1e-12],
  // 64 levels over ±amax (step amax/32); int8 sub-block scales keep the error within one step
  ['q6_k', 256, (x) => amax(x) / 32 + 1e-12]
]

function amax(x: Float32Array): number {
  return x.reduce((m, v) => Math.max(m, Math.abs(v)), 0)
}

function range(x: Float32Array): number {
  return Math.max(...x) - Math.min(0, ...x)
}

describe('quantize -> dequantize stays within each format bound', () => {
  for (const [dtype, block, bound] of BOUNDS) {
    it(dtype, () => {
      const rng = new Rng(42)
      const rows = 8
      const cols = 512
      const x = rng.fillNormal(new Float32Array(rows * cols), 1)
      // a few outliers and an all-zero block, the cases the searches special-case
      x[3] = 9
      x[700] = -12
      x.fill(0, 1024, 1024 + 256)
      const bytes = encodeTensor(dtype, x)
      const y = tensorToFloat32(tensor([rows, cols], { kind: 'ggml', dtype, bytes }))
      let sq = 0
      for (let b = 0; b < x.length; b += block) {
        const xb = x.subarray(b, b + block)
        const limit = bound(xb)
        for (let i = 0; i < block; i++) {
          const err = Math.abs(y[b + i] - xb[i])
          sq += err * err
          if (err > limit) throw new Error(`${dtype}: value ${b + i} error ${err} > bound ${limit}`)
        }
      }
      expect(Array.from(y.subarray(1024, 1024 + 256)).every((v) => v === 0)).toBe(true)
      // and on average much better than the worst case (N(0,1) data)
      const rmse = Math.sqrt(sq / x.length)
      expect(rmse).toBeLessThan({ q8_0: 0.01, q4_0: 0.12, q4_k: 0.09, q6_k: 0.03 }[dtype])
      // the 'fast' K-quant search still makes valid, close blocks
      if (dtype === 'q4_k' || dtype === 'q6_k') {
        const fast = tensorToFloat32(tensor([rows, cols], { kind: 'ggml', dtype, bytes: encodeTensor(dtype, x, 'fast') }))
        const fastRmse = Math.sqrt(fast.reduce((s, v, i) => s + (v - x[i]) ** 2, 0) / x.length)
        expect(fastRmse).toBeLessThan(rmse * 1.5)
      }
    })
  }

  it('f16 and bf16 stay within half an ulp', () => {
    const x = new Rng(3).fillNormal(new Float32Array(1000), 10)
    const f16 = tensorToFloat32(tensor([1000], { kind: 'dense', dtype: 'f16', bytes: encodeTensor('f16', x) }))
    const bf16 = tensorToFloat32(tensor([1000], { kind: 'dense', dtype: 'bf16', bytes: encodeTensor('bf16', x) }))
    x.forEach((v, i) => {
      expect(Math.abs(f16[i] - v)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -11 + 2 ** -25)
      expect(Math.abs(bf16[i] - v)).toBeLessThanOrEqual(Math.abs(v) * 2 ** -8)
    })
  })
})

describe('dequantizeRows', () => {
  it('reads unaligned dense bytes and row slices', () => {
    const x = new Rng(5).fillNormal(new Float32Array(6 * 10), 1)
    for (const dtype of ['f32', 'f16', 'bf16'] as const) {
      const enc = encodeTensor(dtype, x)
      const shifted = new Uint8Array(enc.length + 3)
      shifted.set(enc, 3) // byteOffset 3: no Float32Array/Uint16Array view possible
      const t = tensor([6, 10], { kind: 'dense', dtype, bytes: shifted.subarray(3) })
      const all = tensorToFloat32(t)
      const out = new Float32Array(25).fill(-1)
      dequantizeRows(t, 2, 2, out, 5)
      expect(Array.from(out.subarray(5, 25))).toEqual(Array.from(all.subarray(20, 40)))
      expect(out[4]).toBe(-1)
      if (dtype === 'f32') expect(Array.from(all)).toEqual(Array.from(x))
    }
  })

  it('slices block rows the same as the whole tensor', () => {
    const x = new Rng(9).fillNormal(new Float32Array(4 * 256), 1)
    for (const dtype of ['q8_0', 'q4_0', 'q4_k', 'q6_k'] as const) {
      const t = tensor([4, 256], { kind: 'ggml', dtype, bytes: encodeTensor(dtype, x) })
      const all = tensorToFloat32(t)
      const out = new Float32Array(512)
      dequantizeRows(t, 1, 2, out)
      expect(Array.from(out)).toEqual(Array.from(all.subarray(256, 768)))
    }
  })

  it('decodes int8 groups over the flattened tensor (llama2.c Q8_0)', () => {
    const values = Int8Array.from({ length: 3 * 8 }, (_, i) => i - 12)
    const scales = Float32Array.from([0.5, 2, -1]) // groups of 8 values cross row boundaries (rows of 6)
    const t = tensor([4, 6], { kind: 'int8-groups', values, scales, groupSize: 8 })
    const expected = Array.from(values, (v, i) => v * scales[Math.floor(i / 8)])
    expect(Array.from(tensorToFloat32(t))).toEqual(expected)
    const out = new Float32Array(12)
    dequantizeRows(t, 1, 2, out)
    expect(Array.from(out)).toEqual(expected.slice(6, 18))
  })

  it('rejects rows outside the tensor and short data', () => {
    const t = tensor([2, 32], { kind: 'ggml', dtype: 'q8_0', bytes: new Uint8Array(68) })
    expect(() => dequantizeRows(t, 1, 2, new Float32Array(64))).toThrow(RangeError)
    expect(() => dequantizeRows(t, 0, 2, new Float32Array(10))).toThrow(RangeError)
    const short = tensor([2, 32], { kind: 'ggml', dtype: 'q8_0', bytes: new Uint8Array(40) })
    expect(() => tensorToFloat32(short)).toThrow(/too short/)
  })
})
