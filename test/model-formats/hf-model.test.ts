import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ModelFormatError } from '../../main/engine/model/errors'
import { loadHfModel } from '../../main/engine/model/hf-model'
import { loadModel } from '../../main/engine/model/load'
import { ropeInvFreq } from '../../main/engine/model/rope'
import { parseSafetensors, readSafetensorsHeader } from '../../main/engine/model/safetensors'
import { tensorToFloat32 } from '../../main/engine/model/tensor'
import { encodeSafetensors, writeHfModel } from '../fixtures/hf-writer'
import { sharedModel, tempDir } from '../helpers/paths'

const tinyFolder = sharedModel('tinystories-656K')
const tmp = tempDir()
afterAll(() => tmp.dispose())

/** A fresh copy of the TinyStories folder to damage. */
function tinyCopy(name: string): string {
  const dir = join(tmp.dir, name)
  mkdirSync(dir)
  for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) {
    copyFileSync(join(tinyFolder, f), join(dir, f))
  }
  return dir
}

async function rejects(folder: string, file: string, pattern: RegExp): Promise<void> {
  const err = await loadHfModel(folder).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(ModelFormatError)
  expect((err as ModelFormatError).file).toBe(file)
  expect((err as Error).message).toMatch(pattern)
}

describe('TinyStories-656K (HF safetensors folder)', () => {
  it('reads config.json as the README describes', async () => {
    const m = await loadModel(tinyFolder)
    expect(m.format).toBe('hf')
    expect(m.config).toEqual({
      architecture: 'llama',
      dim: 128,
      hiddenDim: 384,
      nLayers: 2,
      nHeads: 8,
      nKvHeads: 4,
      headDim: 16,
      vocabSize: 2048,
      contextLength: 512,
      normEps: 1e-6,
      ropeTheta: 10000,
      ropePairing: 'rotate-half',
      ropeDim: 16,
      ropeScaling: null,
      ropeFreqFactors: null,
      tiedEmbeddings: true,
      qkvBias: false
    })
    expect(m.stopTokenIds).toEqual([2])
    expect(m.promptStyle).toBe('tokenizer')
    expect(m.quantization).toBe('F32')
    expect(m.tokenizer.bosId).toBe(1)
  })

  it('uses the stored lm_head.weight as both embedding and output', async () => {
    const m = await loadHfModel(tinyFolder)
    const w = m.weights
    if (!w) throw new Error('no weights')
    expect(w.tokenEmbedding.name).toBe('lm_head.weight')
    expect(w.output).toBe(w.tokenEmbedding)
    expect(w.layers[1].wk.shape).toEqual([64, 128])
    expect(w.layers[0].bq).toBeNull()
    // the first tensor in the file is lm_head.weight, right after the 2160-byte header
    const file = readFileSync(join(tinyFolder, 'model.safetensors'))
    expect(tensorToFloat32(w.tokenEmbedding)[0]).toBe(file.readFloatLE(8 + 2160))
  })

  it('validates everything but reads no tensor data with weights: false', async () => {
    const m = await loadHfModel(tinyFolder, { weights: false })
    expect(m.weights).toBeNull()
    expect(m.config.tiedEmbeddings).toBe(true)
  })
})

describe('random HF folders', () => {
  it('loads a Llama-3-like model, sharded, with llama3 rope scaling', async () => {
    const folder = join(tmp.dir, 'llama3')
    const written = writeHfModel(folder, { preset: 'llama3', shards: 3, dtype: 'BF16', seed: 7 })
    const m = await loadModel(folder)
    expect(m.config).toMatchObject({ nHeads: 8, nKvHeads: 2, headDim: 8, ropePairing: 'rotate-half', tiedEmbeddings: false, qkvBias: false })
    expect(m.config.ropeScaling).toEqual({ type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalContextLength: 8192 })
    // the lowest frequency is scaled by 1/factor
    const inv = ropeInvFreq(m.config)
    expect(inv[3]).toBeCloseTo(Math.pow(500000, -6 / 8) / 8, 12)
    expect(m.tensorTypes).toEqual(['bf16'])
    const w = m.weights
    if (!w) throw new Error('no weights')
    expect(w.output).not.toBe(w.tokenEmbedding)
    for (const [name, t] of [
      ['model.layers.1.mlp.down_proj.weight', w.layers[1].wDown],
      ['lm_head.weight', w.output],
      ['model.layers.0.self_attn.k_proj.weight', w.layers[0].wk]
    ] as const) {
      const want = written.tensors.get(name)?.values
      if (!want) throw new Error(`fixture did not write ${name}`)
      const got = tensorToFloat32(t)
      expect(Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(Buffer.from(want.buffer))).toBe(true)
    }
    expect(m.chatTemplate).toContain('<|im_start|>')
    expect(m.tokenizer.bosId).toBe(written.specialIds['<|endoftext|>'])
    expect(m.tokenizer.encode('hi')[0]).toBe(written.specialIds['<|endoftext|>'])
    expect([...m.stopTokenIds].sort()).toEqual([written.specialIds['<|endoftext|>'], written.specialIds['<|im_end|>']].sort())
  })

  it('loads a Qwen2-like model with qkv bias and tied embeddings (F16)', async () => {
    const folder = join(tmp.dir, 'qwen2')
    const written = writeHfModel(folder, { preset: 'qwen2', dtype: 'F16', seed: 3 })
    const m = await loadHfModel(folder)
    expect(m.config).toMatchObject({ architecture: 'qwen2', qkvBias: true, tiedEmbeddings: true, nHeads: 4, nKvHeads: 2, headDim: 16 })
    const w = m.weights
    if (!w || !w.layers[0].bk) throw new Error('no weights or bias')
    expect(w.output).toBe(w.tokenEmbedding)
    expect(tensorToFloat32(w.layers[0].bk)).toEqual(written.tensors.get('model.layers.0.self_attn.k_proj.bias')?.values)
    expect(m.tokenizer.encode('hi')).toEqual(m.tokenizer.encode('hi', { addBos: false }))
    expect(m.stopTokenIds).toContain(written.specialIds['<|im_end|>'])
  })

  it('rejects unsupported configs with clear errors', async () => {
    const folder = join(tmp.dir, 'cfg')
    writeHfModel(folder, { preset: 'llama3' })
    const cfg = join(folder, 'config.json')
    const base = JSON.parse(readFileSync(cfg, 'utf8')) as Record<string, unknown>
    const withConfig = async (patch: Record<string, unknown>, pattern: RegExp, file = cfg): Promise<void> => {
      writeFileSync(cfg, JSON.stringify({ ...base, ...patch }))
      await rejects(folder, file, pattern)
    }
    await withConfig({ model_type: 'gpt_neox', architectures: ['GPTNeoXForCausalLM'] }, /not supported \(supported: llama, mistral, qwen2\)/)
    await withConfig({ hidden_size: undefined }, /hidden_size: expected an integer/)
    await withConfig({ num_key_value_heads: 3 }, /num_key_value_heads 3 does not divide/)
    await withConfig({ rope_scaling: { type: 'yarn', factor: 4 } }, /rope_scaling type "yarn" is not supported/)
    await withConfig({ rope_scaling: { rope_type: 'llama3', factor: 8 } }, /rope_scaling\.low_freq_factor/)
    await withConfig({ hidden_act: 'gelu' }, /hidden_act "gelu"/)
    await withConfig({ vocab_size: 64 }, /tokenizer has 320 tokens but config\.json vocab_size is 64/, join(folder, 'tokenizer.json'))
    writeFileSync(cfg, JSON.stringify({ ...base, model_type: 'mistral', architectures: ['MistralForCausalLM'], sliding_window: 100 }))
    const mistral = await loadHfModel(folder, { weights: false })
    expect(mistral.config).toMatchObject({ architecture: 'llama', contextLength: 100, ropePairing: 'rotate-half' })
    writeFileSync(cfg, '{ nope')
    await rejects(folder, cfg, /not valid JSON/)
  })
})

describe('malformed HF folders', () => {
  it('rejects missing pieces naming them', async () => {
    const dir = tinyCopy('missing')
    rmSync(join(dir, 'tokenizer.json'))
    await rejects(dir, join(dir, 'tokenizer.json'), /file not found/)
    rmSync(join(dir, 'model.safetensors'))
    copyFileSync(join(tinyFolder, 'tokenizer.json'), join(dir, 'tokenizer.json'))
    await rejects(dir, dir, /neither model\.safetensors nor model\.safetensors\.index\.json/)
    rmSync(join(dir, 'config.json'))
    await rejects(dir, join(dir, 'config.json'), /file not found/)
    await expect(loadModel(join(tmp.dir, 'no-such-folder'))).rejects.toThrow(ModelFormatError)
  })

  it('rejects a missing tensor and a wrong shape', async () => {
    const dir = tinyCopy('tensors')
    const file = join(dir, 'model.safetensors')
    const { tensors } = parseSafetensors(new Uint8Array(readFileSync(file)), file)
    const entries = [...tensors.values()]
      .filter((t) => t.name !== 'model.norm.weight')
      .map((t) => ({ name: t.name, dtype: 'F32' as const, shape: t.shape, bytes: t.data.kind === 'dense' ? t.data.bytes : new Uint8Array() }))
    writeFileSync(file, encodeSafetensors(entries))
    await rejects(dir, dir, /tensor "model\.norm\.weight" is missing/)
    entries.push({ name: 'model.norm.weight', dtype: 'F32', shape: [64, 2], bytes: new Uint8Array(512) })
    writeFileSync(file, encodeSafetensors(entries))
    await rejects(dir, file, /"model\.norm\.weight" has shape \[64, 2\], expected \[128\]/)
  })

  it('rejects a bad shard index', async () => {
    const folder = join(tmp.dir, 'shards')
    writeHfModel(folder, { preset: 'qwen2', shards: 2 })
    const index = join(folder, 'model.safetensors.index.json')
    const json = JSON.parse(readFileSync(index, 'utf8')) as { weight_map: Record<string, string> }
    writeFileSync(index, JSON.stringify({ weight_map: { ...json.weight_map, 'model.norm.weight': '../elsewhere.safetensors' } }))
    await rejects(folder, index, /must be a \.safetensors file name in the same folder/)
    writeFileSync(index, JSON.stringify({ weight_map: { ...json.weight_map, 'model.norm.weight': 'model-00009-of-00009.safetensors' } }))
    await rejects(folder, index, /shard model-00009-of-00009\.safetensors is listed but missing/)
    writeFileSync(index, JSON.stringify({ weight_map: { ...json.weight_map, 'extra.weight': 'model-00001-of-00002.safetensors' } }))
    await rejects(folder, join(folder, 'model-00001-of-00002.safetensors'), /"extra\.weight" is listed .* but not stored here/)
  })
})

describe('safetensors reader', () => {
  const file = join(tmp.dir, 'st.safetensors')
  const header = (json: unknown, dataBytes: number, lengthOverride?: bigint): Uint8Array => {
    const text = new TextEncoder().encode(JSON.stringify(json))
    const out = new Uint8Array(8 + text.length + dataBytes)
    new DataView(out.buffer).setBigUint64(0, lengthOverride ?? BigInt(text.length), true)
    out.set(text, 8)
    return out
  }
  const bad = (bytes: Uint8Array, pattern: RegExp): void => {
    writeFileSync(file, bytes)
    expect(() => readSafetensorsHeader(file)).toThrow(pattern)
    expect(() => parseSafetensors(bytes, file)).toThrow(ModelFormatError)
    try {
      parseSafetensors(bytes, file)
    } catch (e) {
      expect((e as ModelFormatError).file).toBe(file)
    }
  }

  it('reads a valid file and ignores __metadata__', () => {
    const bytes = header({ __metadata__: { format: 'pt' }, a: { dtype: 'F16', shape: [2, 3], data_offsets: [0, 12] } }, 12)
    const { tensors } = parseSafetensors(bytes, file)
    expect(tensors.get('a')?.shape).toEqual([2, 3])
    expect(tensors.size).toBe(1)
  })

  it('rejects lying lengths, offsets, sizes, overlaps and dtypes', () => {
    const t = (dtype: string, shape: number[], offsets: number[]) => ({ dtype, shape, data_offsets: offsets })
    bad(new Uint8Array(5), /too short/)
    bad(header({}, 0, 1000n), /header length 1000 runs past the end/)
    bad(header({}, 0, 1n << 40n), /header length .* more than the limit/)
    bad(header({ a: t('F32', [2], [0, 8]) }, 4), /outside the data section/)
    bad(header({ a: t('F32', [3], [0, 8]) }, 16), /needs 12 bytes but data_offsets span 8/)
    bad(header({ a: t('F32', [2], [0, 8]), b: t('F32', [2], [4, 12]) }, 12), /overlap/)
    bad(header({ a: t('I64', [1], [0, 8]) }, 8), /dtype I64 is not supported \(supported: F32, F16, BF16\)/)
    bad(header({ a: t('F32', [-1], [0, 4]) }, 4), /shape must be/)
    bad(header({ a: t('F32', [2 ** 40, 2 ** 40], [0, 4]) }, 4), /needs more bytes than the data section/)
    bad(header({ a: { dtype: 'F32', shape: [1] } }, 4), /data_offsets must be/)
    const notJson = header({}, 0)
    notJson[8] = 0x7b + 1
    bad(notJson, /not valid UTF-8 JSON/)
  })
})
