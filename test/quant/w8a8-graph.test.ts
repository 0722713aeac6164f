/**
 * @file A model compiled with W8A8 (GraphOptions.w8a8: every layer matmul as QuantizeLinear → MatMulInteger →
 * Cast → Mul at its calibrated activation scale) computes what the reference computes with the same W8A8
 * arithmetic (model/w8a8.ts), token after token — and not what the float model computes, on a model whose
 * outlier channels make per-tensor int8 matter.
 */
import { describe, expect, it } from 'vitest'
import { maxAbsDiff } from '../graph/compare'
import { createCpuSession } from '../../main/engine/devices'
import { compileModel } from '../../main/engine/graph'
import { calibrate, createReferenceState, referenceForward, w8a8Linears, w8a8Reference } from '../../main/engine/model'
import { SingleSessionEngine } from '../../main/engine/runtime'
import { outlierModel } from '../fixtures/outlier-model'
import { Rng } from '../fixtures/rng'

const CONTEXT = 32
const model = outlierModel({ seed: 33, dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 80, contextLength: CONTEXT }, { channels: 2, minFactor: 20, maxFactor: 60 })
const rng = new Rng(2)
const tokens = Array.from({ length: 16 }, () => 1 + Math.floor(rng.uniform() * 79))
const calibration = calibrate(model, [tokens])
const scales = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.scale]))

describe('a W8A8-compiled model', () => {
  it('follows the reference’s W8A8 arithmetic token by token, and differs from float32', async () => {
    const bytes = compileModel(model, { ropeTableLength: CONTEXT, w8a8: scales })
    expect(Buffer.from(bytes).includes('MatMulInteger')).toBe(true)
    const engine = new SingleSessionEngine(model, await createCpuSession(bytes, { intraOpThreads: 1 }), { contextLength: CONTEXT, prefillChunkTokens: 1 })
    const linears = w8a8Linears(model, calibration, { shadow: false, prunedPercent: 0 })
    const w8a8 = createReferenceState(model.config, CONTEXT, w8a8Reference(linears))
    const float = createReferenceState(model.config, CONTEXT)
    let worst = 0
    let fromFloat = 0
    try {
      for (let pos = 0; pos < tokens.length; pos++) {
        const got = await engine.forward([tokens[pos]], pos)
        const want = referenceForward(model, w8a8, tokens[pos], pos)
        worst = Math.max(worst, maxAbsDiff(got, want))
        fromFloat = Math.max(fromFloat, maxAbsDiff(got, referenceForward(model, float, tokens[pos], pos)))
      }
    } finally {
      await engine.dispose()
    }
    expect(worst).toBeLessThan(1e-3)
    expect(fromFloat).toBeGreaterThan(100 * worst)
  })

  it('refuses a scale table that covers only part of a fused group', () => {
    const first = Object.keys(scales).find((n) => n.includes('attn_q') || n.endsWith('wq')) ?? Object.keys(scales)[0]
    expect(() => compileModel(model, { ropeTableLength: CONTEXT, w8a8: { [first]: scales[first] } })).toThrow(/W8A8: no activation scale for/)
    expect(() => compileModel(model, { ropeTableLength: CONTEXT, w8a8: { [first]: -1 } })).toThrow(/must be a positive number/)
  })
})
