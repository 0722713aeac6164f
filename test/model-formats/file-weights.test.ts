/**
 * Weights that stay in their files (file-weights.ts): the same values as the file read into memory, for every
 * format and encoding; a lookup reads only its rows; the cache fingerprint and content hash do not depend on
 * where the bytes live; a file changed after its header was read is refused, not misread; and offsets past
 * 4 GiB (one ArrayBuffer's limit, an 8B model's tail) are reachable.
 */
import { readFileSync } from 'node:fs'
import { open, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { modelContentHash, modelFingerprint } from '../../main/engine/graph'
import { dequantizeRows, loadModel, readWeights, tensorToFloat32, type LoadedModel, type ModelWeights, type Tensor, type WeightLayout } from '../../main/engine/model'
import { weightsOfLayout } from '../../main/engine/model/weight-layout'
import { writeRandomGgufModel } from '../fixtures/random-gguf'
import { sharedModel, tempDir } from '../helpers/paths'
import { bytesReadByProcess } from '../helpers/process-io'

const tmp = tempDir('tandem-file-weights-')
afterAll(() => tmp.dispose())

function tensorsOf(w: ModelWeights): Tensor[] {
  return [w.tokenEmbedding, w.finalNorm, w.output, ...w.layers.flatMap((l) => [l.attnNorm, l.wq, l.wk, l.wv, l.wo, l.ffnNorm, l.wGate, l.wUp, l.wDown, l.bq, l.bk, l.bv].filter((t): t is Tensor => t !== null))]
}

/** The model's weights from its files read whole into memory (what the loaders did before): the oracle. */
function inMemory(m: LoadedModel): ModelWeights {
  const files = m.layout.files.map((f) => readFileSync(f.path))
  return weightsOfLayout(m.layout, (s): Tensor => {
    const bytes = files[s.file]
    const range = bytes.subarray(s.offset, s.offset + s.byteLength)
    const e = s.encoding
    if (e.kind !== 'int8-groups') return { name: s.name, shape: s.shape, data: e.kind === 'dense' ? { kind: 'dense', dtype: e.dtype, bytes: range } : { kind: 'ggml', dtype: e.dtype, bytes: range } }
    // a copy, so the floats are 4-byte aligned whatever their offset in the file
    const scales = new Uint8Array(bytes.subarray(e.scalesOffset, e.scalesOffset + (s.byteLength / e.groupSize) * 4))
    return { name: s.name, shape: s.shape, data: { kind: 'int8-groups', values: new Int8Array(range.buffer, range.byteOffset, range.byteLength), scales: new Float32Array(scales.buffer), groupSize: e.groupSize } }
  })
}

async function qwenQ4km(): Promise<string> {
  const path = join(tmp.dir, 'qwen-q4km.gguf')
  await writeRandomGgufModel(path, { architecture: 'qwen2', dim: 256, hiddenDim: 512, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 512, contextLength: 128, tensorType: 'q4_k_m', seed: 11 })
  return path
}

describe('file-backed weights', () => {
  it.each([
    ['GGUF Q4_K_M with q/k/v biases (q4_k, q6_k, f32)', qwenQ4km],
    ['GGUF F32 (stories260K)', async () => sharedModel('stories260K/stories260K.gguf')],
    ['llama2.c int8 groups (stories260K_q80)', async () => sharedModel('stories260K/stories260K_q80.bin')]
  ])('%s: the same values, rows, fingerprint and content hash as the file read into memory', async (_, make) => {
    const m = await loadModel(await make(), { tokenizerPath: sharedModel('stories260K/tok512.bin') })
    if (m.weights === null) throw new Error('weights expected')
    const mem = inMemory(m)
    const lazy = tensorsOf(m.weights)
    const eager = tensorsOf(mem)
    expect(lazy.map((t) => t.name)).toEqual(eager.map((t) => t.name))
    // byte equality: toEqual walks a typed array element by element, seconds for a model
    const sameFloats = (a: Float32Array, b: Float32Array): boolean => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))
    lazy.forEach((t, i) => expect(sameFloats(tensorToFloat32(t), tensorToFloat32(eager[i])), t.name).toBe(true))
    const emb = m.weights.tokenEmbedding
    const dim = m.config.dim
    for (const row of [0, 7, m.config.vocabSize - 1]) {
      const a = new Float32Array(dim)
      const b = new Float32Array(dim)
      dequantizeRows(emb, row, 1, a)
      dequantizeRows(mem.tokenEmbedding, row, 1, b)
      expect(a).toEqual(b)
    }
    const memModel = { config: m.config, weights: mem }
    expect(modelFingerprint(m as { config: LoadedModel['config']; weights: ModelWeights })).toBe(modelFingerprint(memModel))
    expect(modelContentHash(m as { config: LoadedModel['config']; weights: ModelWeights })).toBe(modelContentHash(memModel))
  })

  it('opens without reading the weights, and a lookup reads its row, not the table', async ({ skip }) => {
    const path = await qwenQ4km()
    // 1 GiB of holes after the tensors: a load that read the file would read them
    const fh = await open(path, 'r+')
    await fh.truncate(2 ** 30)
    await fh.close()
    try {
      const before = bytesReadByProcess()
      skip(before === null, 'no /proc/self/io here to count the bytes this process reads')
      const m = await loadModel(path)
      if (m.weights === null) throw new Error('weights expected')
      const row = new Float32Array(m.config.dim)
      dequantizeRows(m.weights.tokenEmbedding, 5, 1, row)
      const read = (bytesReadByProcess() ?? 0) - (before ?? 0)
      expect(row.some((v) => v !== 0)).toBe(true)
      expect(read).toBeLessThan(8 * 2 ** 20)
    } finally {
      await writeFile(path, '')
    }
  })

  it('refuses a file that changed size since its header was read, with the reason', async () => {
    const path = await qwenQ4km()
    const m = await loadModel(path)
    if (m.weights === null) throw new Error('weights expected')
    const fh = await open(path, 'a')
    await fh.write(new Uint8Array(10))
    await fh.close()
    expect(() => tensorToFloat32(m.weights?.layers[0].wq as Tensor)).toThrow(/file changed since its header was read/)
  })

  it('reads tensors that lie past 4 GiB (one ArrayBuffer\'s limit) in a sparse file', async () => {
    const path = join(tmp.dir, 'far.bin')
    const offset = 5 * 2 ** 30 + 4096
    const values = Float32Array.from({ length: 64 }, (_, i) => i - 31.5)
    const fh = await open(path, 'w')
    await fh.write(new Uint8Array(values.buffer), 0, values.byteLength, offset)
    await fh.close()
    try {
      const source = (name: string, shape: number[], at: number): WeightLayout['finalNorm'] => ({ name, shape, encoding: { kind: 'dense', dtype: 'f32' }, file: 0, offset: at, byteLength: shape.reduce((a, b) => a * b, 1) * 4 })
      const layout: WeightLayout = {
        files: [{ path, sizeBytes: offset + values.byteLength }],
        tokenEmbedding: source('emb', [8, 8], offset),
        layers: [],
        finalNorm: source('norm', [8], offset),
        output: null
      }
      const w = readWeights(layout)
      expect(tensorToFloat32(w.tokenEmbedding)).toEqual(values)
      const row = new Float32Array(8)
      dequantizeRows(w.tokenEmbedding, 7, 1, row)
      expect(row).toEqual(values.subarray(56))
    } finally {
      await writeFile(path, '')
    }
  })
})
