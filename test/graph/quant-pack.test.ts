import { describe, expect, it } from 'vitest'
import { packNBits, unpackNBits } from '../../main/engine/graph'
import { tensorToFloat32 } from '../../main/engine/model/tensor'
import type { Tensor } from '../../main/engine/model/types'
import { encodeTensor } from '../fixtures/quantize'
import { Rng } from '../fixtures/rng'

const N = 6
const K = 512

function randomMatrix(seed: number): Float32Array {
  const x = new Rng(seed).fillNormal(new Float32Array(N * K), 0.05)
  // a few outliers and an all-zero row exercise extreme scales and zero blocks
  x[7] = 0.9
  x[K + 3] = -1.3
  x.fill(0, 2 * K, 3 * K)
  return x
}

function expectExact(t: Tensor): void {
  const packed = packNBits(t)
  expect(packed).not.toBeNull()
  if (!packed) return
  const got = unpackNBits(packed)
  const want = tensorToFloat32(t)
  let maxDiff = 0
  for (let i = 0; i < want.length; i++) maxDiff = Math.max(maxDiff, Math.abs(got[i] - want[i]))
  // MatMulNBits' (code − zp)·scale (− min) reproduces ggml's float32 dequantization
  expect(maxDiff).toBeLessThanOrEqual(1e-7)
}

describe('MatMulNBits packing reproduces dequantizeRows', () => {
  for (const dtype of ['q8_0', 'q4_0', 'q4_k', 'q6_k'] as const) {
    it(dtype, () => {
      const bytes = encodeTensor(dtype, randomMatrix(11), 'ggml')
      expectExact({ name: dtype, shape: [N, K], data: { kind: 'ggml', dtype, bytes } })
    })
  }

  it('q4_k blocks whose sub-scale is zero but whose min is not (a float zero point could not express them)', () => {
    const bytes = encodeTensor('q4_k', randomMatrix(12), 'ggml')
    // super-block 0 of row 0: zero the 6-bit scale of sub-block 1 (byte 4+1) and give it a min
    bytes[4 + 1] = 0
    bytes[4 + 5] = 17
    expectExact({ name: 'q4_k_zero_scale', shape: [N, K], data: { kind: 'ggml', dtype: 'q4_k', bytes } })
  })

  it('int8 groups (llama2.c Q8_0) with power-of-two groups', () => {
    const rng = new Rng(5)
    for (const groupSize of [16, 32, 64]) {
      const values = Int8Array.from({ length: N * K }, () => rng.int(255) - 127)
      const scales = Float32Array.from({ length: (N * K) / groupSize }, () => rng.uniform() * 0.01)
      expectExact({ name: `int8_${groupSize}`, shape: [N, K], data: { kind: 'int8-groups', values, scales, groupSize } })
    }
  })

  it('int8 groups that are not a power of two fall back to a dense MatMul', () => {
    const t: Tensor = {
      name: 'odd',
      shape: [2, 48],
      data: { kind: 'int8-groups', values: new Int8Array(96), scales: new Float32Array(4), groupSize: 24 }
    }
    expect(packNBits(t)).toBeNull()
  })

  it('dense tensors are not packed', () => {
    const x = new Float32Array(64)
    expect(packNBits({ name: 'dense', shape: [2, 32], data: { kind: 'dense', dtype: 'f32', bytes: new Uint8Array(x.buffer) } })).toBeNull()
  })
})
