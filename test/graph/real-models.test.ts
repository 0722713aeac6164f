import { describe, expect, it } from 'vitest'
import { loadModel } from '../../main/engine/model'
import { sharedModel } from '../helpers/paths'
import { compareWithReference, toleranceFor } from './compare'

// The trained test models, compiled and run in-process against the reference forward on the same weights.
const PROMPT = [1, 403, 407, 261, 378, 432, 383, 286, 261]

async function expectMatches(path: string, options: { tokenizerPath?: string } = {}): Promise<void> {
  const model = await loadModel(sharedModel(path), options)
  if (!model.weights) throw new Error('no weights')
  const r = await compareWithReference({ config: { ...model.config, contextLength: 64 }, weights: model.weights }, PROMPT, 8)
  expect(r.top1Equal).toBe(true)
  expect(r.maxAbsDiff).toBeLessThan(toleranceFor(r) * r.logitScale)
}

describe('compiled graphs of the trained test models vs reference forward', () => {
  it('stories260K.bin (llama2.c fp32)', async () => {
    await expectMatches('stories260K/stories260K.bin')
  })
  it('stories260K.gguf (GGUF F32)', async () => {
    await expectMatches('stories260K/stories260K.gguf')
  })
  it('stories260K_q80.bin (llama2.c Q8_0 int8 groups -> MatMulNBits)', async () => {
    await expectMatches('stories260K/stories260K_q80.bin', { tokenizerPath: sharedModel('stories260K/tok512.bin') })
  })
  it('TinyStories-656K (Hugging Face safetensors, rotate-half, tied)', async () => {
    await expectMatches('tinystories-656K')
  })
})
