import { describe, expect, it } from 'vitest'
import { compareWithReference } from './compare'
import { randomModel, type RandomModelSpec } from './random-model'

const PROMPT = [3, 17, 42, 5, 88, 1, 60, 23, 9, 71, 33]

async function expectMatches(spec: RandomModelSpec, prefillChunk = 128): Promise<void> {
  const model = randomModel(spec)
  const r = await compareWithReference(model, PROMPT, 6, { prefillChunk })
  expect(r.steps).toBe(7)
  expect(r.top1Equal).toBe(true)
  expect(r.maxAbsDiff).toBeLessThan(1e-3 * r.logitScale)
}

describe('compiled f32 graph vs reference forward', () => {
  it('GQA llama, adjacent pairing', async () => {
    await expectMatches({ seed: 1 })
  })
  it('rotate-half pairing', async () => {
    await expectMatches({ seed: 2, ropePairing: 'rotate-half' })
  })
  it('partial rotary dims, both pairings', async () => {
    await expectMatches({ seed: 3, ropePairing: 'rotate-half', ropeDim: 8 })
    await expectMatches({ seed: 4, ropePairing: 'adjacent', ropeDim: 8 })
  })
  it('Llama-3 rope scaling', async () => {
    await expectMatches({
      seed: 5,
      ropePairing: 'rotate-half',
      ropeTheta: 500000,
      ropeScaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalContextLength: 16 }
    })
  })
  it('Qwen2 qkv bias, tied embeddings', async () => {
    await expectMatches({ seed: 6, qkvBias: true, tiedEmbeddings: true, ropePairing: 'rotate-half' })
  })
  it('multi-head attention (nKvHeads = nHeads) and single KV head', async () => {
    await expectMatches({ seed: 7, nKvHeads: 4 })
    await expectMatches({ seed: 8, nKvHeads: 1 })
  })
  it('prefill split into several chunks', async () => {
    await expectMatches({ seed: 9 }, 4)
  })
})
