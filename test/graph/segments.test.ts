import { describe, expect, it } from 'vitest'
import { createSession, float32Tensor, int64Tensor, tensorFloat32Data, type OrtTensor } from '../../main/engine/devices'
import { compileModel, compileSegment, modelOpGroups, segmentSpec } from '../../main/engine/graph'
import { tensorToFloat32 } from '../../main/engine/model'
import { randomModel } from './random-model'

describe('segments', () => {
  it('two segments cut between layers compute what the whole graph computes', async () => {
    const model = randomModel({ seed: 31, nLayers: 2 })
    const c = model.config
    const options = { ropeTableLength: 16 }
    const all = modelOpGroups(c)
    const firstSpec = segmentSpec(c, all.slice(0, 7), all)
    const restSpec = segmentSpec(c, all.slice(7), all)
    const session = { device: 'cpu' as const, intraOpThreads: 1 }
    const whole = await createSession(compileModel(model, options), session)
    const first = await createSession(compileSegment(model, firstSpec, options), session)
    const rest = await createSession(compileSegment(model, restSpec, options), session)
    try {
      expect(new Set(first.inputNames)).toEqual(new Set(firstSpec.inputs))
      expect(new Set(rest.outputNames)).toEqual(new Set(restSpec.outputs))
      // 3 prompt tokens, empty cache
      const S = 3
      const emb = tensorToFloat32(model.weights.tokenEmbedding)
      const hidden = new Float32Array(S * c.dim)
      ;[5, 9, 2].forEach((t, i) => hidden.set(emb.subarray(t * c.dim, (t + 1) * c.dim), i * c.dim))
      const empty = (): OrtTensor => float32Tensor(new Float32Array(0), [0, c.nKvHeads, c.headDim])
      const positions = (): OrtTensor => int64Tensor(BigInt64Array.of(0n, 1n, 2n), [S])
      const w = await whole.run({
        hidden: float32Tensor(hidden, [S, c.dim]),
        positions: positions(),
        past_k_0: empty(), past_v_0: empty(), past_k_1: empty(), past_v_1: empty()
      })
      const a = await first.run({ hidden: float32Tensor(hidden, [S, c.dim]), positions: positions(), past_k_0: empty(), past_v_0: empty() })
      const b = await rest.run({ resid_0: a.resid_0, positions: positions(), past_k_1: empty(), past_v_1: empty() })
      const want = tensorFloat32Data(w.logits, 'logits')
      const got = tensorFloat32Data(b.logits, 'logits')
      for (let i = 0; i < want.length; i++) expect(Math.abs(got[i] - want[i])).toBeLessThan(1e-5)
      expect([...tensorFloat32Data(a.new_k_0, 'k')]).toEqual([...tensorFloat32Data(w.new_k_0, 'k')])
    } finally {
      await Promise.all([whole.release(), first.release(), rest.release()])
    }
  })
})
