/**
 * @file KV rows out of a model worker and into another: stories260K prefilled in one worker, its cache read as
 * snapshot bytes and written into a fresh worker, continues with the same logits as the worker that computed them
 * (float32 bytes: identical; float16: within half precision) — the single CPU session's cache as the device
 * workers' could not be; the codec round-trips and refuses a wrong length.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { loadModel } from '../../main/engine/model'
import { openModelWorker, type ModelWorkerClient } from '../../main/engine/runtime'
import { decodeKvRows, encodeKvRows, kvBytesPerToken } from '../../main/engine/runtime/kv-snapshot'
import { PUBLISHED_STORIES260K_IDS } from '../helpers/published'
import { sharedModel, tempDir } from '../helpers/paths'

const cache = tempDir('tandem-kv-worker-')
afterAll(() => cache.dispose())

const PROMPT = PUBLISHED_STORIES260K_IDS.slice(0, 40)

function maxAbs(a: Float32Array, b: Float32Array): number {
  let m = 0
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]))
  return m
}

describe('KV snapshots through the model worker', () => {
  it('a fresh worker given the snapshot continues exactly as the worker that computed it', async () => {
    const header = await loadModel(sharedModel('stories260K/stories260K.gguf'), { weights: false })
    const workers: ModelWorkerClient[] = []
    try {
      const open = async (): Promise<ModelWorkerClient> => {
        const w = await openModelWorker(header, { cacheDir: cache.dir, threads: 1, maxContext: 128 })
        workers.push(w)
        return w
      }
      const source = await open()
      expect(source.kvSnapshots).toBe(true)
      expect(source.fingerprint).toMatch(/^[0-9a-f]{64}$/)
      await source.forward(PROMPT, 0)
      const next = PUBLISHED_STORIES260K_IDS[40]
      const exact = await source.readKv(0, PROMPT.length, 'f32')
      const half = await source.readKv(0, PROMPT.length, 'f16')
      expect(exact.byteLength).toBe(PROMPT.length * kvBytesPerToken({ nLayers: header.config.nLayers, rowValues: header.config.nKvHeads * header.config.headDim }, 'f32'))
      expect(half.byteLength * 2).toBe(exact.byteLength)
      const want = await source.forward([next], PROMPT.length)

      const restored = await open()
      await restored.writeKv(0, PROMPT.length, 'f32', exact)
      expect(maxAbs(await restored.forward([next], PROMPT.length), want)).toBe(0)
      // float16: a different cache, close but not the same bits
      const fromHalf = await open()
      await fromHalf.writeKv(0, PROMPT.length, 'f16', half)
      const got = await fromHalf.forward([next], PROMPT.length)
      expect(maxAbs(got, want)).toBeLessThan(0.05)
      // a part of the snapshot: the first 16 positions, then the rest computed
      await restored.writeKv(0, 16, 'f32', exact.subarray(0, 16 * (exact.byteLength / PROMPT.length)))
      await expect(restored.writeKv(0, 16, 'f32', exact.subarray(0, 100))).rejects.toThrow(/needs \d+ bytes, got 100/)
    } finally {
      await Promise.all(workers.map((w) => w.dispose()))
    }
  }, 120_000)

  it('the codec round-trips float32 exactly and refuses a wrong length', () => {
    const layout = { nLayers: 2, rowValues: 3 }
    const rows = { keys: [Float32Array.of(1, 2, 3, 4, 5, 6), Float32Array.of(-1, 0.5, 7, 8, 9, 10)], values: [Float32Array.of(0.1, 0.2, 0.3, 0.4, 0.5, 0.6), Float32Array.of(6, 5, 4, 3, 2, 1)] }
    const bytes = encodeKvRows(rows, 2, layout, 'f32')
    expect(bytes.byteLength).toBe(2 * kvBytesPerToken(layout, 'f32'))
    expect(decodeKvRows(bytes, 2, layout, 'f32')).toEqual(rows)
    const half = decodeKvRows(encodeKvRows(rows, 2, layout, 'f16'), 2, layout, 'f16')
    expect(Array.from(half.keys[1])).toEqual([-1, 0.5, 7, 8, 9, 10])
    expect(() => decodeKvRows(bytes.subarray(1), 2, layout, 'f32')).toThrow(/needs 96 bytes, got 95/)
  })
})
