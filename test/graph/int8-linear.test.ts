/**
 * The reference's int8-activation emulation reproduces the graph's quantized matmuls (MatMulNBits
 * accuracy_level 4, fused Q/K/V and single weights, Q4_K mins) on identical inputs, for every quantized
 * encoding — the fact the model-level int8 comparisons rest on.
 */
import { describe, expect, it } from 'vitest'
import { createSession, float32Tensor, tensorFloat32Data } from '../../main/engine/devices'
import { int8RoundingOf } from '../../main/engine/graph'
import { EmitContext } from '../../main/engine/graph/emit-context'
import { emitLinears } from '../../main/engine/graph/linear'
import { GraphBuilder } from '../../main/engine/graph/onnx-builder'
import { tensorToFloat32, type Tensor } from '../../main/engine/model'
import { roundToInt8Blocks } from '../../main/engine/model/reference'
import { Rng } from '../fixtures/rng'
import { randomModel, type MatrixEncoding } from './random-model'

/** What reference.ts's `linear` computes for one row x [K] and weight t [N, K]. */
function emulated(t: Tensor, x: Float32Array): Float64Array {
  const [n, k] = t.shape
  const plan = int8RoundingOf(t, { ropeTableLength: 1 })
  if (!plan) throw new Error(`${t.name} has no int8 plan`)
  const xq = roundToInt8Blocks(new Float32Array(k), x, k, plan.block)
  const w = tensorToFloat32(t)
  const out = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    let s = 0
    for (let j = 0; j < k; j++) s += w[i * k + j] * xq[j]
    out[i] = s
  }
  if (plan.minsT) {
    for (let b = 0; b < k / plan.block; b++) {
      let shift = 0
      for (let j = b * plan.block; j < (b + 1) * plan.block; j++) shift += xq[j] - x[j]
      for (let i = 0; i < n; i++) out[i] += plan.minsT[b * n + i] * shift
    }
  }
  return out
}

async function expectExactInt8(encoding: MatrixEncoding): Promise<void> {
  const model = randomModel({ seed: 60, dim: 256, hiddenDim: 512, nHeads: 4, nKvHeads: 2, nLayers: 1, encoding })
  const l = model.weights.layers[0]
  const groups: Tensor[][] = [[l.wq, l.wk, l.wv], [l.wDown]]
  for (const ws of groups) {
    const k = ws[0].shape[1]
    const b = new GraphBuilder('int8')
    const ctx = new EmitContext(b, model.config, model.weights, { ropeTableLength: 1 })
    b.input('x', 'float32', [1, 'seq', k])
    const ys = emitLinears(ctx, 'x', ws, ws.map(() => null), ws.map((w) => w.name))
    ys.forEach((y, i) => {
      b.node('Identity', [y], { outputs: [`y${i}`] })
      b.output(`y${i}`, 'float32', [1, 'seq', ws[i].shape[0]])
    })
    const session = await createSession(b.toBytes('test'), { ep: 'cpu', intraOpThreads: 1 })
    try {
      for (const rowsCount of [1, 5]) {
        const x = new Rng(rowsCount).fillNormal(new Float32Array(rowsCount * k), 1)
        const out = await session.run({ x: float32Tensor(x, [1, rowsCount, k]) })
        ws.forEach((w, i) => {
          const n = w.shape[0]
          const got = tensorFloat32Data(out[`y${i}`], `y${i}`)
          for (let r = 0; r < rowsCount; r++) {
            const want = emulated(w, x.subarray(r * k, (r + 1) * k))
            let scale = 0
            let diff = 0
            for (let j = 0; j < n; j++) {
              scale = Math.max(scale, Math.abs(want[j]))
              diff = Math.max(diff, Math.abs(got[r * n + j] - want[j]))
            }
            expect(diff).toBeLessThan(1e-5 * scale)
          }
        })
      }
    } finally {
      await session.release()
    }
  }
}

describe('int8-activation matmuls vs the reference emulation, identical inputs', () => {
  for (const encoding of ['q8_0', 'q4_0', 'q4_k', 'q6_k', 'int8-groups'] as const) {
    it(encoding, async () => {
      await expectExactInt8(encoding)
    })
  }
})
