/**
 * The fixture writer's Llama-3.2-1B and Qwen2.5-1.5B shapes (the bench's default models) load with our
 * GGUF loader: every layer and the full 128k/152k vocabularies, checked from the header (shapes, GQA,
 * biases, rope factors, the Q4_K_M mix, the tokenizer). Written header-only (the matrices' bytes are
 * holes), so a test takes about a second instead of the ~1 minute of quantizing 1.2B random weights;
 * the weights themselves are covered by roundtrip.test.ts on small shapes with the same code paths.
 */
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readGgufHeader } from '../../bench/gguf-summary'
import { loadGgufModel } from '../../main/engine/model/gguf-model'
import { ropeInvFreq } from '../../main/engine/model/rope'
import { LLAMA_3_2_1B, llama3RopeFreqFactors, QWEN_2_5_1_5B, type ModelShape } from '../fixtures/model-shapes'
import { useMoreBits, writeRandomGgufModel, type RandomTensorType } from '../fixtures/random-gguf'
import { tempDir } from '../helpers/paths'

const tmp = tempDir('tandem-real-shapes-')
afterAll(() => tmp.dispose())

async function writeShape(name: string, shape: ModelShape, tensorType: RandomTensorType): Promise<string> {
  const path = join(tmp.dir, `${name}-${tensorType}.gguf`)
  await writeRandomGgufModel(path, { ...shape, tensorType, seed: 11, headerOnly: true })
  return path
}

const TEXT = 'Once upon a time, there was a little girl named Lily. She said: "Hello, world!" 42'

describe('real model shapes (header-only files)', () => {
  it('Llama-3.2-1B: GQA 32/8, head 64, tied, llama3 rope factors, 128,256-token Llama 3 BPE', async () => {
    const path = await writeShape('llama-3.2-1b', LLAMA_3_2_1B, 'q4_k_m')
    const m = await loadGgufModel(path, { weights: false })
    expect(m.config).toMatchObject({
      architecture: 'llama', dim: 2048, hiddenDim: 8192, nLayers: 16, nHeads: 32, nKvHeads: 8, headDim: 64, ropeDim: 64,
      vocabSize: 128_256, contextLength: 131_072, ropeTheta: 500_000, tiedEmbeddings: true, qkvBias: false
    })
    const factors = m.config.ropeFreqFactors ?? []
    expect(factors).toHaveLength(32)
    // the highest frequencies are kept, the lowest divided by factor 32, a smooth blend between
    expect(factors[0]).toBe(1)
    expect(factors[31]).toBe(32)
    expect(factors.filter((f) => f > 1 && f < 32).length).toBeGreaterThan(0)
    expect(factors).toEqual(llama3RopeFreqFactors(64, 500_000, { factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalContextLength: 8192 }).map(Math.fround))
    // the engine's RoPE divides θ_j by the factors (what llama.cpp's ggml_rope_ext does with freq_factors)
    const inv = ropeInvFreq(m.config)
    expect(inv[31]).toBeCloseTo(Math.pow(500_000, -62 / 64) / 32, 15)

    expect(m.tokenizer.kind).toBe('bpe')
    expect(m.tokenizer.vocabSize).toBe(128_256)
    const ids = m.tokenizer.encode(TEXT)
    expect(ids[0]).toBe(128_000) // <|begin_of_text|>
    expect(m.tokenizer.decode(ids.slice(1))).toBe(TEXT)
    expect(m.tokenizer.encode('<|eot_id|>', { addBos: false })).toEqual([128_009])
    expect(m.stopTokenIds).toContain(128_009)
    expect(m.chatTemplate).toContain('<|start_header_id|>')

    const h = await readGgufHeader(path)
    const type = (name: string): string | undefined => h.tensors.find((t) => t.name === name)?.type.encoding
    expect(h.tensors.find((t) => t.name === 'output.weight')).toBeUndefined()
    expect(type('token_embd.weight')).toBe('q6_k') // tied: quantized as the output head
    expect(h.tensors.find((t) => t.name === 'blk.0.attn_k.weight')?.dims).toEqual([2048, 512])
    for (let l = 0; l < 16; l++) {
      const more = useMoreBits(l, 16) ? 'q6_k' : 'q4_k'
      expect([type(`blk.${l}.attn_v.weight`), type(`blk.${l}.ffn_down.weight`), type(`blk.${l}.attn_q.weight`)], `layer ${l}`).toEqual([more, more, 'q4_k'])
    }
    // the whole file's size as the real Q4_K_M would have it (1B: ~0.8 GB), sparse on disk here
    expect((await stat(path)).size).toBeGreaterThan(0.75e9)
  })

  it('Qwen2.5-1.5B: GQA 12/2, head 128, q/k/v biases, tied, 151,936-token ChatML BPE', async () => {
    const path = await writeShape('qwen2.5-1.5b', QWEN_2_5_1_5B, 'q8_0')
    const m = await loadGgufModel(path, { weights: false })
    expect(m.config).toMatchObject({
      architecture: 'qwen2', dim: 1536, hiddenDim: 8960, nLayers: 28, nHeads: 12, nKvHeads: 2, headDim: 128, ropeDim: 128,
      vocabSize: 151_936, contextLength: 32_768, ropeTheta: 1_000_000, tiedEmbeddings: true, qkvBias: true, ropeFreqFactors: null
    })
    expect(m.tokenizer.vocabSize).toBe(151_936)
    const ids = m.tokenizer.encode(TEXT)
    expect(m.tokenizer.decode(ids)).toBe(TEXT)
    const imEnd = m.tokenizer.encode('<|im_end|>', { addBos: false })
    expect(imEnd).toHaveLength(1)
    expect(m.stopTokenIds).toContain(imEnd[0])

    const h = await readGgufHeader(path)
    const info = (name: string): { dims: readonly number[]; type: string } | undefined => {
      const t = h.tensors.find((x) => x.name === name)
      return t && { dims: t.dims, type: t.type.encoding }
    }
    expect(info('blk.27.attn_q.bias')?.dims).toEqual([1536])
    expect(info('blk.27.attn_k.bias')?.dims).toEqual([256])
    expect(info('blk.27.attn_v.bias')?.dims).toEqual([256])
    expect(info('blk.0.attn_v.weight')).toEqual(expect.objectContaining({ dims: [1536, 256], type: 'q8_0' }))
    expect(info('blk.0.ffn_down.weight')?.dims).toEqual([8960, 1536])
  })

  it("follows llama.cpp's use_more_bits with integer division on 28 layers", () => {
    const q6 = Array.from({ length: 28 }, (_, l) => l).filter((l) => useMoreBits(l, 28))
    expect(q6).toEqual([0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27])
  })
})
