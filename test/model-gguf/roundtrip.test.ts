/**
 * Writer -> parser -> loader round trips: every metadata value type, tensors of every encoding, and
 * seeded random llama / qwen2 models in each tensor type (weights checked against the regenerated
 * floats), including Q4_K_M's mix, tied embeddings, rope factors and header-only loads.
 */
import { open, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BinaryReader } from '../../main/engine/model/binary-reader'
import { parseGguf, type GgufValue } from '../../main/engine/model/gguf'
import { loadGgufModel } from '../../main/engine/model/gguf-model'
import { tensorToFloat32 } from '../../main/engine/model/tensor'
import type { Tensor } from '../../main/engine/model/types'
import { encodeGguf, GGML_TYPE } from '../fixtures/gguf-writer'
import { encodeTensor } from '../fixtures/quantize'
import { writeRandomGgufModel, type RandomGgufSpec } from '../fixtures/random-gguf'
import { deriveSeed, Rng } from '../fixtures/rng'
import { tempDir } from '../helpers/paths'
import { bytesReadByProcess } from '../helpers/process-io'

const tmp = tempDir('tandem-gguf-rt-')
afterAll(() => tmp.dispose())

describe('GGUF writer -> parser', () => {
  it('round-trips every metadata value type and tensor encoding', () => {
    const metadata: Array<[string, GgufValue]> = [
      ['a.u8', { type: 'u8', value: 255 }],
      ['a.i8', { type: 'i8', value: -128 }],
      ['a.u16', { type: 'u16', value: 65535 }],
      ['a.i16', { type: 'i16', value: -32768 }],
      ['a.u32', { type: 'u32', value: 4294967295 }],
      ['a.i32', { type: 'i32', value: -2147483648 }],
      ['a.f32', { type: 'f32', value: 0.15625 }],
      ['a.f64', { type: 'f64', value: Math.PI }],
      ['a.u64', { type: 'u64', value: 2n ** 64n - 1n }],
      ['a.i64', { type: 'i64', value: -(2n ** 63n) }],
      ['a.bool', { type: 'bool', value: true }],
      ['a.string', { type: 'string', value: 'héllo ▁wörld {{ messages }}' }],
      ['a.empty', { type: 'string', value: '' }],
      ['a.strings', { type: 'array', value: { itemType: 'string', values: ['x', '', 'Ġthe', '<|im_end|>'] } }],
      ['a.f32s', { type: 'array', value: { itemType: 'f32', values: [1.5, -2, 0] } }],
      ['a.i64s', { type: 'array', value: { itemType: 'i64', values: [1n, -1n] } }],
      ['a.bools', { type: 'array', value: { itemType: 'bool', values: [false, true] } }],
      ['a.nested', { type: 'array', value: { itemType: 'array', values: [{ itemType: 'u8', values: [1, 2] }, { itemType: 'string', values: ['z'] }] } }],
      ['a.none', { type: 'array', value: { itemType: 'u32', values: [] } }]
    ]
    const x = new Rng(1).fillNormal(new Float32Array(2 * 256), 1)
    const encodings = ['f32', 'f16', 'bf16', 'q8_0', 'q4_0', 'q4_k', 'q6_k'] as const
    const tensors = encodings.map((e) => ({ name: `t.${e}`, dims: [2, 256], ggmlType: GGML_TYPE[e], bytes: encodeTensor(e, x) }))
    tensors.push({ name: 'odd', dims: [3, 5, 7], ggmlType: GGML_TYPE.f32, bytes: new Uint8Array(3 * 5 * 7 * 4) })
    for (const alignment of [32, 64, 1]) {
      const file = encodeGguf({ metadata, tensors, alignment })
      const h = parseGguf(new BinaryReader(file, 'mem.gguf'))
      expect(h.alignment).toBe(alignment)
      expect(h.dataOffset % alignment).toBe(0)
      for (const [k, v] of metadata) expect(h.metadata.get(k), k).toEqual(v)
      expect(h.tensors.map((t) => t.name)).toEqual(tensors.map((t) => t.name))
      h.tensors.forEach((t, i) => {
        expect(t.dims).toEqual([...tensors[i].dims].reverse())
        const bytes = file.subarray(t.absoluteOffset, t.absoluteOffset + t.sizeBytes)
        expect(Buffer.from(bytes).equals(Buffer.from(tensors[i].bytes)), t.name).toBe(true)
      })
    }
  })
})

const BASE: Omit<RandomGgufSpec, 'architecture' | 'tensorType' | 'seed'> = {
  dim: 256, hiddenDim: 512, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 600, contextLength: 128
}

/** The floats random-gguf generated for a tensor (same seed derivation). */
function regenerate(t: Tensor, seed: number, mean: number): Float32Array {
  const n = t.shape.reduce((a, b) => a * b, 1)
  return new Rng(deriveSeed(seed, t.name)).fillNormal(new Float32Array(n), 0.02, mean)
}

/** Largest |a - b| relative to the weight scale. */
function maxError(a: Float32Array, b: Float32Array): number {
  let m = 0
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]))
  return m
}

describe('random GGUF models', () => {
  const cases: Array<[RandomGgufSpec['architecture'], RandomGgufSpec['tensorType'], number]> = [
    // tolerance on |w| ~ 0.02·N(0,1) (max |w| ≈ 0.1): exact, f16/bf16 rounding, then quantization steps
    ['llama', 'f32', 0],
    ['llama', 'f16', 1e-4],
    ['qwen2', 'bf16', 1e-3],
    ['llama', 'q8_0', 1e-3],
    ['qwen2', 'q4_0', 0.02],
    ['llama', 'q4_k_m', 0.02],
    ['qwen2', 'q4_k_m', 0.02]
  ]
  for (const [architecture, tensorType, tol] of cases) {
    it(`${architecture} ${tensorType}`, async () => {
      const seed = 1234
      const path = join(tmp.dir, `${architecture}-${tensorType}.gguf`)
      const spec: RandomGgufSpec = { ...BASE, architecture, tensorType, seed }
      await writeRandomGgufModel(path, spec)
      const m = await loadGgufModel(path)
      const w = m.weights
      if (!w) throw new Error('no weights')
      expect(m.config).toMatchObject({
        architecture, dim: 256, hiddenDim: 512, nLayers: 2, nHeads: 4, nKvHeads: 2, headDim: 64, vocabSize: 600,
        contextLength: 128, ropeDim: 64, tiedEmbeddings: false, qkvBias: architecture === 'qwen2',
        ropePairing: architecture === 'qwen2' ? 'rotate-half' : 'adjacent'
      })
      expect(m.config.ropeTheta).toBe(architecture === 'qwen2' ? 1e6 : 1e4)
      const matrices = [w.tokenEmbedding, w.output, ...w.layers.flatMap((l) => [l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown])]
      for (const t of matrices) expect(maxError(tensorToFloat32(t), regenerate(t, seed, 0)), t.name).toBeLessThanOrEqual(tol)
      for (const t of [w.finalNorm, ...w.layers.flatMap((l) => [l.attnNorm, l.ffnNorm])]) {
        expect(tensorToFloat32(t)).toEqual(regenerate(t, seed, 1))
      }
      if (architecture === 'qwen2') {
        const l0 = w.layers[0]
        expect(l0.bq?.shape).toEqual([256])
        expect(l0.bk?.shape).toEqual([128])
        expect(tensorToFloat32(l0.bv ?? w.finalNorm)).toEqual(regenerate(l0.bv ?? w.finalNorm, seed, 0))
        expect(m.chatTemplate).toContain('<|im_start|>')
        expect(m.tokenizer.kind).toBe('bpe')
        const imEnd = m.tokenizer.encode('<|im_end|>', { addBos: false })
        expect(imEnd.length).toBe(1)
        expect(m.stopTokenIds).toContain(imEnd[0])
      } else {
        expect(m.tokenizer.kind).toBe('spm')
        expect(m.tokenizer.decode(m.tokenizer.encode('Once upon a time'))).toBe('Once upon a time')
      }
      if (tensorType === 'q4_k_m') {
        expect(m.quantization).toMatch(/^Q4_K_M \(/)
        expect(m.tensorTypes).toEqual(['f32', 'q4_k', 'q6_k'])
        expect(w.output.data.kind === 'ggml' && w.output.data.dtype).toBe('q6_k')
        // use_more_bits with C's integer division: of 2 layers only the last (7·2/8 = 1) gets Q6_K
        expect(w.layers[0].wv.data.kind === 'ggml' && w.layers[0].wv.data.dtype).toBe('q4_k')
        expect(w.layers[1].wv.data.kind === 'ggml' && w.layers[1].wv.data.dtype).toBe('q6_k')
        expect(w.layers[1].wDown.data.kind === 'ggml' && w.layers[1].wDown.data.dtype).toBe('q6_k')
        expect(w.layers[0].wq.data.kind === 'ggml' && w.layers[0].wq.data.dtype).toBe('q4_k')
      }
    })
  }

  it('ties embeddings and carries rope factors', async () => {
    const path = join(tmp.dir, 'tied.gguf')
    const factors = Array.from({ length: 32 }, (_, i) => 1 + i / 8)
    await writeRandomGgufModel(path, { ...BASE, architecture: 'llama', tensorType: 'q8_0', seed: 5, tiedEmbeddings: true, ropeFreqFactors: factors, ropeTheta: 500000 })
    for (const weights of [true, false]) {
      const m = await loadGgufModel(path, { weights })
      expect(m.config.tiedEmbeddings).toBe(true)
      expect(m.config.ropeTheta).toBe(500000)
      expect(m.config.ropeFreqFactors).toEqual(factors)
      if (weights) expect(m.weights?.output).toBe(m.weights?.tokenEmbedding)
    }
  })

  it('streams a tensor larger than one chunk with the values of a single fill', async () => {
    // 17,000 × 256 = 4.35M values: more than one 4M-value chunk, so the embedding is written in two
    const path = join(tmp.dir, 'chunked.gguf')
    await writeRandomGgufModel(path, { ...BASE, vocabSize: 17_000, architecture: 'llama', tensorType: 'f32', seed: 9, tiedEmbeddings: true })
    const w = (await loadGgufModel(path)).weights
    if (!w) throw new Error('no weights')
    expect(maxError(tensorToFloat32(w.tokenEmbedding), regenerate(w.tokenEmbedding, 9, 0))).toBe(0)
  })

  it('rejects shapes the K-quants cannot hold', async () => {
    await expect(writeRandomGgufModel(join(tmp.dir, 'bad.gguf'), { ...BASE, dim: 192, architecture: 'llama', tensorType: 'q4_k_m', seed: 1 }))
      .rejects.toThrow(/multiple of 256/)
  })

  it('reads only the header when weights are not wanted (large vocab, huge sparse file)', async ({ skip }) => {
    const path = join(tmp.dir, 'big-vocab.gguf')
    // ~50k BPE tokens + merges: the header outgrows the first 1 MiB read
    await writeRandomGgufModel(path, { ...BASE, dim: 64, hiddenDim: 128, nHeads: 2, nKvHeads: 1, vocabSize: 50_000, architecture: 'qwen2', tensorType: 'f32', seed: 2 })
    expect(parseGguf(new BinaryReader(await readFile(path), path)).dataOffset).toBeGreaterThan(2 ** 20)
    const full = await loadGgufModel(path)
    const light = await loadGgufModel(path, { weights: false })
    expect(light.weights).toBeNull()
    expect(light.config).toEqual(full.config)
    expect(light.tokenizer.vocabSize).toBe(50_000)
    // grow the file to 3 GiB of holes: a header-only load must not read it. Counted in bytes the process
    // read (Linux /proc/self/io rchar), not in how long the load took: reading the holes is fast on some
    // machines and slow on others, the byte count is the same everywhere
    const fh = await open(path, 'r+')
    await fh.truncate(3 * 2 ** 30)
    await fh.close()
    try {
      const readBefore = bytesReadByProcess()
      skip(readBefore === null, 'no /proc/self/io here to count the bytes this process reads')
      const sparse = await loadGgufModel(path, { weights: false })
      const readBytes = (bytesReadByProcess() ?? 0) - (readBefore ?? 0)
      expect(sparse.config).toEqual(full.config)
      // the header is a few MiB; the rest of the file is 3 GiB
      expect(readBytes).toBeGreaterThan(2 ** 20)
      expect(readBytes).toBeLessThan(64 * 2 ** 20)
    } finally {
      await writeFile(path, '') // free the space right away
    }
  })
})
