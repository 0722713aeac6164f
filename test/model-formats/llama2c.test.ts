import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ModelFormatError } from '../../main/engine/model/errors'
import { loadLlama2cModel } from '../../main/engine/model/llama2c'
import { loadModel } from '../../main/engine/model/load'
import { tensorToFloat32 } from '../../main/engine/model/tensor'
import type { Tensor } from '../../main/engine/model/types'
import { sharedModel, tempDir } from '../helpers/paths'

const binPath = sharedModel('stories260K/stories260K.bin')
const q80Path = sharedModel('stories260K/stories260K_q80.bin')
const tokPath = sharedModel('stories260K/tok512.bin')
const fileView = new DataView(readFileSync(binPath).buffer.slice(0))
const tmp = tempDir()
afterAll(() => tmp.dispose())

/** float32 at a byte offset of stories260K.bin (README byte-range table). */
const fileF32 = (offset: number): number => fileView.getFloat32(offset, true)

/** i-th value of a dense f32 tensor. */
function f32At(t: Tensor, i: number): number {
  if (t.data.kind !== 'dense' || t.data.dtype !== 'f32') throw new Error(`${t.name} is not dense f32`)
  return new DataView(t.data.bytes.buffer, t.data.bytes.byteOffset).getFloat32(4 * i, true)
}

/** Writes `bytes` into the temp folder beside a copy of tok512.bin, returns the model path. */
function tempModel(name: string, bytes: Uint8Array): string {
  const path = join(tmp.dir, name)
  writeFileSync(path, bytes)
  copyFileSync(tokPath, join(tmp.dir, 'tok512.bin'))
  return path
}

describe('llama2.c legacy fp32 (stories260K.bin)', () => {
  it('reads the header into the published config', async () => {
    const m = await loadModel(binPath)
    expect(m.format).toBe('llama2c')
    expect(m.config).toMatchObject({
      architecture: 'llama',
      dim: 64,
      hiddenDim: 172,
      nLayers: 5,
      nHeads: 8,
      nKvHeads: 4,
      headDim: 8,
      vocabSize: 512,
      contextLength: 512,
      normEps: 1e-5,
      ropeTheta: 10000,
      ropePairing: 'adjacent',
      ropeDim: 8,
      tiedEmbeddings: true,
      qkvBias: false
    })
    expect(m.stopTokenIds).toEqual([1, 2])
    expect(m.promptStyle).toBe('llama2c')
    expect(m.tokenizer.kind).toBe('llama2c')
    expect(m.quantization).toBe('F32')
  })

  it('maps tensors to the README byte ranges', async () => {
    const { weights: w } = await loadLlama2cModel(binPath)
    if (!w) throw new Error('no weights')
    expect(w.output).toBe(w.tokenEmbedding)
    expect(f32At(w.tokenEmbedding, 0)).toBe(fileF32(28))
    expect(f32At(w.tokenEmbedding, 511 * 64 + 63)).toBe(fileF32(131100 - 4))
    expect(f32At(w.layers[0].attnNorm, 0)).toBe(fileF32(131100))
    expect(f32At(w.layers[1].wq, 5)).toBe(fileF32(132380 + (64 * 64 + 5) * 4))
    expect(f32At(w.layers[2].wk, 7)).toBe(fileF32(214300 + (2 * 32 * 64 + 7) * 4))
    expect(f32At(w.layers[4].wo, 0)).toBe(fileF32(296220 + 4 * 64 * 64 * 4))
    expect(f32At(w.layers[3].ffnNorm, 1)).toBe(fileF32(378140 + (3 * 64 + 1) * 4))
    expect(f32At(w.layers[0].wGate, 0)).toBe(fileF32(379420))
    expect(f32At(w.layers[4].wDown, 171)).toBe(fileF32(599580 + (4 * 64 * 172 + 171) * 4))
    expect(f32At(w.layers[1].wUp, 0)).toBe(fileF32(819740 + 172 * 64 * 4))
    expect(f32At(w.finalNorm, 63)).toBe(fileF32(1040156 - 4))
    expect(w.layers[0].wk.shape).toEqual([32, 64])
    expect(w.layers[0].wDown.shape).toEqual([64, 172])
    // views into one file buffer, 4-byte aligned
    const d = w.layers[3].wv.data
    expect(d.kind === 'dense' && d.bytes.byteOffset % 4).toBe(0)
  })

  it('reads only the header and tokenizer with weights: false', async () => {
    const m = await loadLlama2cModel(binPath, { weights: false })
    expect(m.weights).toBeNull()
    expect(m.config.dim).toBe(64)
    expect(m.tokenizer.vocabSize).toBe(512)
  })
})

/** Raw bytes of a dense tensor. */
const rawBytes = (t: Tensor): Uint8Array => {
  if (t.data.kind !== 'dense') throw new Error(`${t.name} is not dense`)
  return t.data.bytes
}

/** Bitwise equality of two float arrays (fast; toEqual walks 30k elements slowly). */
const sameFloats = (a: Float32Array, b: Float32Array): boolean =>
  a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength))

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

describe('llama2.c layouts rebuilt from stories260K.bin', () => {
  it('reads a version-1 file (256-byte header, norms first) to the same weights', async () => {
    const f = await loadLlama2cModel(binPath)
    const w = f.weights!
    const header = new Uint8Array(256)
    const hv = new DataView(header.buffer)
    hv.setUint32(0, 0x616b3432, true)
    hv.setInt32(4, 1, true)
    ;[64, 172, 5, 8, 4, 512, 512].forEach((v, i) => hv.setInt32(8 + 4 * i, v, true))
    header[36] = 1
    const per = (pick: (l: (typeof w.layers)[number]) => Tensor) => w.layers.map((l) => rawBytes(pick(l)))
    const v1 = concat([
      header,
      ...per((l) => l.attnNorm),
      ...per((l) => l.ffnNorm),
      rawBytes(w.finalNorm),
      rawBytes(w.tokenEmbedding),
      ...per((l) => l.wq),
      ...per((l) => l.wk),
      ...per((l) => l.wv),
      ...per((l) => l.wo),
      ...per((l) => l.wGate),
      ...per((l) => l.wDown),
      ...per((l) => l.wUp)
    ])
    const m = await loadLlama2cModel(tempModel('v1.bin', v1))
    expect(m.config).toEqual(f.config)
    const g = m.weights!
    expect(g.output).toBe(g.tokenEmbedding)
    expect(sameFloats(tensorToFloat32(g.layers[4].wDown), tensorToFloat32(w.layers[4].wDown))).toBe(true)
    expect(sameFloats(tensorToFloat32(g.layers[2].ffnNorm), tensorToFloat32(w.layers[2].ffnNorm))).toBe(true)
    expect(sameFloats(tensorToFloat32(g.tokenEmbedding), tensorToFloat32(w.tokenEmbedding))).toBe(true)
  })

  it('reads an unshared classifier after the RoPE tables when vocab_size is negative', async () => {
    const good = new Uint8Array(readFileSync(binPath))
    const wcls = new Float32Array(512 * 64).map((_, i) => i / 1000)
    const bytes = concat([good, new Uint8Array(wcls.buffer)])
    new DataView(bytes.buffer).setInt32(20, -512, true)
    const m = await loadLlama2cModel(tempModel('unshared.bin', bytes))
    expect(m.config.tiedEmbeddings).toBe(false)
    expect(m.config.vocabSize).toBe(512)
    expect(m.weights!.output).not.toBe(m.weights!.tokenEmbedding)
    expect(sameFloats(tensorToFloat32(m.weights!.output), wcls)).toBe(true)
  })
})

describe('llama2.c version 2 Q8_0 (stories260K_q80.bin)', () => {
  it('dequantizes to the fp32 weights within half a scale step per group', async () => {
    const q = await loadLlama2cModel(q80Path)
    const f = await loadLlama2cModel(binPath)
    expect(q.config).toEqual(f.config)
    expect(q.tensorTypes).toContain('int8-groups')
    if (!q.weights || !f.weights) throw new Error('no weights')
    const pairs: [Tensor, Tensor][] = [[q.weights.tokenEmbedding, f.weights.tokenEmbedding]]
    q.weights.layers.forEach((l, i) => {
      const r = f.weights!.layers[i]
      pairs.push([l.wq, r.wq], [l.wk, r.wk], [l.wv, r.wv], [l.wo, r.wo], [l.wGate, r.wGate], [l.wUp, r.wUp], [l.wDown, r.wDown])
      expect(tensorToFloat32(l.attnNorm)).toEqual(tensorToFloat32(r.attnNorm))
      expect(tensorToFloat32(l.ffnNorm)).toEqual(tensorToFloat32(r.ffnNorm))
    })
    expect(tensorToFloat32(q.weights.finalNorm)).toEqual(tensorToFloat32(f.weights.finalNorm))
    expect(q.weights.output).toBe(q.weights.tokenEmbedding)
    for (const [qt, ft] of pairs) {
      if (qt.data.kind !== 'int8-groups') throw new Error(`${qt.name} is ${qt.data.kind}`)
      const { values, scales, groupSize } = qt.data
      expect(groupSize).toBe(32)
      expect(qt.shape).toEqual(ft.shape)
      const ref = tensorToFloat32(ft)
      expect(values.length).toBe(ref.length)
      let worst = 0
      for (let i = 0; i < ref.length; i++) {
        const scale = scales[Math.floor(i / groupSize)]
        worst = Math.max(worst, Math.abs(values[i] * scale - ref[i]) / (scale / 2))
      }
      expect(worst).toBeLessThanOrEqual(1 + 1e-5)
    }
  })
})

describe('llama2.c malformed files', () => {
  const good = new Uint8Array(readFileSync(binPath))
  const q80 = new Uint8Array(readFileSync(q80Path))
  const withI32 = (src: Uint8Array, offset: number, value: number): Uint8Array => {
    const copy = src.slice()
    new DataView(copy.buffer).setInt32(offset, value, true)
    return copy
  }
  const rejects = async (path: string, pattern: RegExp): Promise<void> => {
    const err = await loadLlama2cModel(path).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ModelFormatError)
    expect((err as ModelFormatError).file).toBe(path)
    expect((err as Error).message).toMatch(pattern)
  }

  it('rejects a truncated file naming expected and actual sizes', async () => {
    await rejects(tempModel('short.bin', good.subarray(0, good.length - 4)), /1056536 bytes.*implies 1056540/)
    await rejects(tempModel('tiny.bin', good.subarray(0, 10)), /ends inside/)
  })

  it('rejects a padded file', async () => {
    const padded = new Uint8Array(good.length + 4)
    padded.set(good)
    await rejects(tempModel('long.bin', padded), /1056544 bytes.*implies 1056540/)
  })

  it('rejects impossible header fields', async () => {
    await rejects(tempModel('dim.bin', withI32(good, 0, 63)), /dim 63 is not divisible by n_heads 8/)
    await rejects(tempModel('kv.bin', withI32(good, 16, 3)), /n_kv_heads 3 does not divide n_heads 8/)
    await rejects(tempModel('zero.bin', withI32(good, 8, 0)), /n_layers is 0/)
    await rejects(tempModel('huge.bin', withI32(good, 24, 0x7fffffff)), /seq_len is 2147483647, outside/)
    // a negative vocab size claims an unshared classifier that is not in the file
    await rejects(tempModel('neg.bin', withI32(good, 20, -512)), /implies 1187612/)
  })

  it('rejects bad version-2 headers', async () => {
    await rejects(tempModel('v9.bin', withI32(q80, 4, 9)), /version 9 is not supported/)
    await rejects(tempModel('gs.bin', withI32(q80, 37, 0)), /group_size is 0/)
    await rejects(tempModel('gs7.bin', withI32(q80, 37, 7)), /not a multiple of group_size 7/)
    const flag = q80.slice()
    flag[36] = 5
    await rejects(tempModel('flag.bin', flag), /shared_classifier is 5/)
  })

  it('reports a missing file', async () => {
    await rejects(join(tmp.dir, 'nope.bin'), /not found/)
    const err = await loadModel(join(tmp.dir, 'nope')).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ModelFormatError)
  })

  it('lists the tokenizers it tried', async () => {
    const dir = tempDir()
    try {
      const model = join(dir.dir, 'm.bin')
      copyFileSync(binPath, model)
      await expect(loadLlama2cModel(model)).rejects.toThrow(/no tok\*\.bin/)
      writeFileSync(join(dir.dir, 'tok999.bin'), readFileSync(tokPath).subarray(0, 3000))
      await expect(loadLlama2cModel(model)).rejects.toThrow(/tried: .*tok999\.bin.*ends inside/)
      copyFileSync(tokPath, join(dir.dir, 'tokenizer.bin'))
      const m = await loadLlama2cModel(model, { weights: false })
      expect(m.tokenizer.vocabSize).toBe(512)
      await expect(loadLlama2cModel(model, { tokenizerPath: join(dir.dir, 'tok999.bin') })).rejects.toThrow(ModelFormatError)
    } finally {
      dir.dispose()
    }
  })
})
