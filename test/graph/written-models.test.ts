/**
 * Seeded random-weight models written to real files by the project's own fixture writers, loaded back through
 * loadModel, compiled, and compared with the reference forward on the same loaded weights; then the worker
 * runner's greedy ids are compared with the reference's greedy ids.
 */
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { loadModel, type LoadedModel } from '../../main/engine/model'
import { openModelWorker } from '../../main/engine/runtime'
import { writeHfModel } from '../fixtures/hf-writer'
import { writeRandomGgufModel, type RandomGgufSpec } from '../fixtures/random-gguf'
import { tempDir } from '../helpers/paths'
import { ReferenceRunner } from '../helpers/reference-runner'
import { argmax, compareWithReference, toleranceFor } from './compare'

const scratch = tempDir('tandem-written-')
afterAll(() => scratch.dispose())

async function expectMatchesReference(model: LoadedModel, prompt: number[]): Promise<void> {
  if (!model.weights) throw new Error('no weights')
  const r = await compareWithReference({ config: { ...model.config, contextLength: 64 }, weights: model.weights }, prompt, 6)
  expect(r.top1Equal).toBe(true)
  expect(r.maxAbsDiff).toBeLessThan(toleranceFor(r) * r.logitScale)
}

/** Greedy ids from the worker-backed runner and from the reference agree token for token. */
async function expectSameGreedy(path: string, model: LoadedModel, prompt: number[], steps: number): Promise<void> {
  const greedy = async (runner: { forward(t: readonly number[], p: number): Promise<Float32Array> }): Promise<number[]> => {
    const ids: number[] = []
    let logits = await runner.forward(prompt, 0)
    for (let i = 0; i < steps; i++) {
      const id = argmax(logits)
      ids.push(id)
      logits = await runner.forward([id], prompt.length + i)
    }
    return ids
  }
  const runner = await openModelWorker(path, { cacheDir: join(scratch.dir, 'cache'), maxContext: 64 })
  try {
    expect(await greedy(runner)).toEqual(await greedy(new ReferenceRunner(model, 64)))
  } finally {
    await runner.dispose()
  }
}

const base = { dim: 256, hiddenDim: 512, nLayers: 2, nHeads: 8, nKvHeads: 2, vocabSize: 512, contextLength: 256, seed: 11 }

describe('file-written random models: compiled graph vs reference', () => {
  it('Llama-3-like HF folder (GQA, llama3 rope scaling, rotate-half, BF16, sharded)', async () => {
    const written = await writeHfModel(join(scratch.dir, 'llama3'), { preset: 'llama3', dtype: 'BF16', seed: 3, shards: 2 })
    const model = await loadModel(written.folder)
    expect(model.config.ropeScaling?.type).toBe('llama3')
    expect(model.config.nKvHeads).toBeLessThan(model.config.nHeads)
    await expectMatchesReference(model, [1, 5, 9, 14, 200, 33])
    await expectSameGreedy(written.folder, model, [1, 5, 9], 8)
  })

  it('Qwen2-like HF folder (qkv bias, tied embeddings, F16)', async () => {
    const written = await writeHfModel(join(scratch.dir, 'qwen2'), { preset: 'qwen2', dtype: 'F16', seed: 4 })
    const model = await loadModel(written.folder)
    expect(model.config.qkvBias).toBe(true)
    await expectMatchesReference(model, [1, 7, 8, 90, 12])
  })

  const ggufCases: Array<[string, Partial<RandomGgufSpec>]> = [
    ['qwen2 GGUF Q8_0 (qkv bias, NEOX rope)', { architecture: 'qwen2', tensorType: 'q8_0' }],
    ['llama GGUF Q4_0', { architecture: 'llama', tensorType: 'q4_0' }],
    ['llama GGUF Q4_K_M (q4_k + q6_k), tied, rope_freqs', { architecture: 'llama', tensorType: 'q4_k_m', tiedEmbeddings: true, ropeFreqFactors: Array.from({ length: 16 }, (_, i) => 1 + i / 4) }],
    ['llama GGUF F16', { architecture: 'llama', tensorType: 'f16' }]
  ]
  for (const [name, spec] of ggufCases) {
    it(name, async () => {
      const path = join(scratch.dir, `${name.replace(/\W+/g, '_')}.gguf`)
      await writeRandomGgufModel(path, { architecture: 'llama', tensorType: 'f32', ...base, ...spec })
      const model = await loadModel(path)
      await expectMatchesReference(model, [1, 40, 41, 42, 500])
      if (spec.tensorType === 'q4_k_m') {
        expect(model.tensorTypes).toEqual(expect.arrayContaining(['q4_k', 'q6_k']))
        await expectSameGreedy(path, model, [1, 40, 41], 8)
      }
    })
  }
})
