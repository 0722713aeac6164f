import { describe, expect, it } from 'vitest'
import { compareWithReference, EXACT_TOLERANCE, toleranceFor } from './compare'
import { randomModel, type MatrixEncoding } from './random-model'

// K-quants need rows of whole 256-value super-blocks: dim and hiddenDim multiples of 256
const SHAPE = { dim: 256, hiddenDim: 512, nHeads: 4, nKvHeads: 2, vocabSize: 97, nLayers: 2 }
const PROMPT = [3, 17, 42, 5, 88, 1, 60, 23]

type Spec = Partial<Parameters<typeof randomModel>[0]>

/** Float32 arithmetic: the graph computes with exactly the values the reference dequantizes; only summation order differs. */
async function expectExact(encoding: MatrixEncoding, extra: Spec = {}): Promise<void> {
  const model = randomModel({ seed: 20, ...SHAPE, encoding, ...extra })
  const r = await compareWithReference(model, PROMPT, 4, { int8Activations: false })
  expect(r.top1Equal).toBe(true)
  expect(r.maxAbsDiff).toBeLessThan(EXACT_TOLERANCE * r.logitScale)
}

/** int8 activations (the production default) against a reference that rounds the same inputs the same way. */
async function expectEmulated(encoding: MatrixEncoding, extra: Spec = {}): Promise<void> {
  const model = randomModel({ seed: 20, ...SHAPE, encoding, ...extra })
  const r = await compareWithReference(model, PROMPT, 4)
  expect(r.int8Matmuls).toBeGreaterThan(0)
  expect(r.top1Equal).toBe(true)
  expect(r.maxAbsDiff).toBeLessThan(toleranceFor(r) * r.logitScale)
}

describe('compiled quantized graphs vs reference forward (reference dequantizes)', () => {
  for (const encoding of ['q8_0', 'q4_0', 'q4_k', 'q6_k', 'int8-groups', 'f16', 'bf16'] as const) {
    it(`${encoding}, float32 arithmetic`, async () => {
      await expectExact(encoding)
    })
  }
  for (const encoding of ['q8_0', 'q4_0', 'q4_k', 'q6_k', 'int8-groups'] as const) {
    it(`${encoding}, int8 activations vs emulating reference`, async () => {
      await expectEmulated(encoding)
    })
  }
  const mix: Spec = {
    tiedEmbeddings: true,
    encodingFor: (role) => (role === 'wv' || role === 'wDown' || role === 'tokenEmbedding' ? 'q6_k' : undefined)
  }
  it('Q4_K_M-like mix (q4_k with q6_k for wv, wDown and the lm head), tied q6_k embedding', async () => {
    await expectExact('q4_k', mix)
    await expectEmulated('q4_k', mix)
  })
  it('int8 groups of 24 fall back to dense weights', async () => {
    await expectExact('int8-groups', { groupSize: 64 })
    await expectExact('int8-groups', { groupSize: 24, dim: 96, hiddenDim: 192, nHeads: 4 })
  })
})
