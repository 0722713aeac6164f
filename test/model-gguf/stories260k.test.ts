/**
 * stories260K.gguf against the models README: header counts, config, and every tensor bit-identical to
 * the same tensor in stories260K.bin (read here straight from the README's byte-layout table).
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BinaryReader } from '../../main/engine/model/binary-reader'
import { parseGguf } from '../../main/engine/model/gguf'
import { loadGgufModel } from '../../main/engine/model/gguf-model'
import { tensorToFloat32 } from '../../main/engine/model/tensor'
import type { Tensor } from '../../main/engine/model/types'
import { sharedModel } from '../helpers/paths'

const ggufPath = sharedModel('stories260K/stories260K.gguf')
const binPath = sharedModel('stories260K/stories260K.bin')

// README "Byte layout of the legacy llama2.c checkpoint": (dim 64, hidden 172, 5 layers, kv_dim 32, vocab 512)
const DIM = 64
const HIDDEN = 172
const LAYERS = 5
const KV_DIM = 32
const VOCAB = 512
const BIN_BLOCKS = {
  embedding: { start: 28, perLayer: VOCAB * DIM },
  rmsAtt: { start: 131100, perLayer: DIM },
  wq: { start: 132380, perLayer: DIM * DIM },
  wk: { start: 214300, perLayer: KV_DIM * DIM },
  wv: { start: 255260, perLayer: KV_DIM * DIM },
  wo: { start: 296220, perLayer: DIM * DIM },
  rmsFfn: { start: 378140, perLayer: DIM },
  w1: { start: 379420, perLayer: HIDDEN * DIM },
  w2: { start: 599580, perLayer: DIM * HIDDEN },
  w3: { start: 819740, perLayer: HIDDEN * DIM },
  rmsFinal: { start: 1039900, perLayer: DIM }
} as const

const bin = readFileSync(binPath)

/** Raw f32 bytes of one block (layer `l`) of the .bin. */
function binBytes(block: keyof typeof BIN_BLOCKS, l = 0): Uint8Array {
  const { start, perLayer } = BIN_BLOCKS[block]
  const from = start + l * perLayer * 4
  return bin.subarray(from, from + perLayer * 4)
}

function denseBytes(t: Tensor): Uint8Array {
  if (t.data.kind !== 'dense' || t.data.dtype !== 'f32') throw new Error(`${t.name} is not dense f32`)
  return t.data.bytes
}

describe('stories260K.gguf', () => {
  it('has the header the README describes', () => {
    const bytes = readFileSync(ggufPath)
    const h = parseGguf(new BinaryReader(bytes, ggufPath))
    expect(h.version).toBe(3)
    expect(h.metadata.size).toBe(19)
    expect(h.tensors.length).toBe(48)
    expect(h.dataOffset).toBe(14176)
    expect(h.alignment).toBe(32)
    expect(h.tensors.every((t) => t.type.name === 'F32')).toBe(true)
    const embd = h.tensors.find((t) => t.name === 'token_embd.weight')
    expect(embd?.dims).toEqual([64, 512])
    expect(h.metadata.get('general.architecture')).toEqual({ type: 'string', value: 'llama' })
  })

  it('loads with the README config', async () => {
    const m = await loadGgufModel(ggufPath)
    expect(m.format).toBe('gguf')
    expect(m.config).toMatchObject({
      architecture: 'llama', dim: 64, hiddenDim: 172, nLayers: 5, nHeads: 8, nKvHeads: 4, headDim: 8,
      vocabSize: 512, contextLength: 2048, ropeDim: 8, ropeTheta: 10000, ropePairing: 'adjacent',
      ropeScaling: null, ropeFreqFactors: null, tiedEmbeddings: false, qkvBias: false
    })
    expect(m.config.normEps).toBeCloseTo(1e-5, 10)
    expect(m.quantization).toBe('F32')
    expect(m.tensorTypes).toEqual(['f32'])
    expect(m.promptStyle).toBe('tokenizer')
    expect(m.stopTokenIds).toContain(2)
    expect(m.tokenizer.vocabSize).toBe(512)
    expect(m.chatTemplate).toBeNull()
  })

  it('holds every tensor bit-identical to stories260K.bin', async () => {
    const m = await loadGgufModel(ggufPath)
    const w = m.weights
    if (!w) throw new Error('weights missing')
    const pairs: Array<[Tensor, Uint8Array, readonly number[]]> = [
      [w.tokenEmbedding, binBytes('embedding'), [VOCAB, DIM]],
      [w.output, binBytes('embedding'), [VOCAB, DIM]],
      [w.finalNorm, binBytes('rmsFinal'), [DIM]]
    ]
    w.layers.forEach((layer, l) => {
      pairs.push(
        [layer.attnNorm, binBytes('rmsAtt', l), [DIM]],
        [layer.wq, binBytes('wq', l), [DIM, DIM]],
        [layer.wk, binBytes('wk', l), [KV_DIM, DIM]],
        [layer.wv, binBytes('wv', l), [KV_DIM, DIM]],
        [layer.wo, binBytes('wo', l), [DIM, DIM]],
        [layer.ffnNorm, binBytes('rmsFfn', l), [DIM]],
        [layer.wGate, binBytes('w1', l), [HIDDEN, DIM]],
        [layer.wDown, binBytes('w2', l), [DIM, HIDDEN]],
        [layer.wUp, binBytes('w3', l), [HIDDEN, DIM]]
      )
    })
    expect(w.layers.length).toBe(LAYERS)
    expect(pairs.length).toBe(48)
    for (const [t, expected, shape] of pairs) {
      expect(t.shape, t.name).toEqual(shape)
      expect(Buffer.from(denseBytes(t)).equals(Buffer.from(expected)), t.name).toBe(true)
      // and through the float path
      const f = tensorToFloat32(t)
      const ref = new Float32Array(expected.buffer.slice(expected.byteOffset, expected.byteOffset + expected.byteLength))
      expect(Buffer.from(f.buffer).equals(Buffer.from(ref.buffer)), t.name).toBe(true)
    }
  })

  it('loads config and tokenizer without weights', async () => {
    const full = await loadGgufModel(ggufPath)
    const light = await loadGgufModel(ggufPath, { weights: false })
    expect(light.weights).toBeNull()
    expect(light.config).toEqual(full.config)
    expect(light.quantization).toBe(full.quantization)
    expect(light.tokenizer.encode('Once upon a time')).toEqual(full.tokenizer.encode('Once upon a time'))
  })
})
