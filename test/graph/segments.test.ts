import { describe, expect, it } from 'vitest'
import { createSession, float32Tensor, int64Tensor, tensorFloat32Data, type OrtTensor } from '../../main/engine/devices'
import { compileModel, compileSegment, kvOutputValues, KV_OUTPUT, modelOpGroups, segmentSpec } from '../../main/engine/graph'
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
    expect(kvOutputValues(firstSpec)).toEqual(['new_k_0', 'new_v_0'])
    expect(kvOutputValues(restSpec)).toEqual(['new_k_1', 'new_v_1'])
    const session = { ep: 'cpu' as const, intraOpThreads: 1 }
    const whole = await createSession(compileModel(model, options), session)
    const first = await createSession(compileSegment(model, firstSpec, options), session)
    const rest = await createSession(compileSegment(model, restSpec, options), session)
    try {
      expect(new Set(first.inputNames)).toEqual(new Set(firstSpec.inputs))
      expect(new Set(rest.outputNames)).toEqual(new Set(['logits', KV_OUTPUT]))
      // 3 prompt tokens, empty cache of capacity 4 (its contents are masked out)
      const S = 3
      const cap = 4
      const emb = tensorToFloat32(model.weights.tokenEmbedding)
      const hidden = new Float32Array(S * c.dim)
      ;[5, 9, 2].forEach((t, i) => hidden.set(emb.subarray(t * c.dim, (t + 1) * c.dim), i * c.dim))
      const junk = (): Float32Array => Float32Array.from({ length: c.nKvHeads * c.headDim * cap }, (_, i) => Math.sin(i))
      const pastK = (): OrtTensor => float32Tensor(junk(), [c.nKvHeads, c.headDim, cap])
      const pastV = (): OrtTensor => float32Tensor(junk(), [c.nKvHeads, cap, c.headDim])
      const positions = (): OrtTensor => int64Tensor(BigInt64Array.of(0n, 1n, 2n), [S])
      const w = await whole.run({
        hidden: float32Tensor(hidden, [1, S, c.dim]),
        positions: positions(),
        past_k_0: pastK(), past_v_0: pastV(), past_k_1: pastK(), past_v_1: pastV()
      })
      const a = await first.run({ hidden: float32Tensor(hidden, [1, S, c.dim]), positions: positions(), past_k_0: pastK(), past_v_0: pastV() })
      const b = await rest.run({ resid_0: a.resid_0, positions: positions(), past_k_1: pastK(), past_v_1: pastV() })
      const want = tensorFloat32Data(w.logits, 'logits')
      const got = tensorFloat32Data(b.logits, 'logits')
      for (let i = 0; i < want.length; i++) expect(Math.abs(got[i] - want[i])).toBeLessThan(1e-5)
      // whole: [k0, v0, k1, v1] × [S, kvDim]; each segment returns its own layer's pair
      const block = S * c.nKvHeads * c.headDim
      const wholeKv = tensorFloat32Data(w[KV_OUTPUT], 'kv')
      expect(wholeKv.length).toBe(4 * block)
      expect([...tensorFloat32Data(a[KV_OUTPUT], 'kv')]).toEqual([...wholeKv.subarray(0, 2 * block)])
      const restKv = tensorFloat32Data(b[KV_OUTPUT], 'kv')
      for (let i = 0; i < 2 * block; i++) expect(Math.abs(restKv[i] - wholeKv[2 * block + i])).toBeLessThan(1e-5)
    } finally {
      await Promise.all([whole.release(), first.release(), rest.release()])
    }
  })
})
