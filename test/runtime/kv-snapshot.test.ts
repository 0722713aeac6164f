/**
 * @file KV rows out of a model worker and into another: stories260K prefilled in one worker, its cache read as
 * snapshot bytes and written into a fresh worker, continues with the same logits as the worker that computed them
 * (float32 bytes: identical; float16: within half precision; int8: within half a step of each channel's or token's scale);
 * device workers hand out and take their per-layer caches the same way — the single CPU session's cache as the device
 * workers' could not be; a cache's snapshot bytes round-trip and a wrong length is refused.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { maxAbsDiff } from '../graph/compare'
import { loadModel } from '../../main/engine/model'
import { openModelWorker, type ModelWorkerClient } from '../../main/engine/runtime'
import { discoverDevices } from '../../main/engine/devices'
import { parsePlacement, weightInfoOf, type Placement } from '../../main/engine/plan'
import { kvBlockBytes } from '../../main/engine/runtime/kv-snapshot'
import { KvCache } from '../../main/engine/runtime/session/kv-cache'
import { PUBLISHED_STORIES260K_IDS } from '../helpers/published'
import { sharedModel, tempDir } from '../helpers/paths'

const cache = tempDir('tandem-kv-worker-')
afterAll(() => cache.dispose())

const PROMPT = PUBLISHED_STORIES260K_IDS.slice(0, 40)

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
      expect(source.kvSource).toBe('single session on cpu')
      expect(source.fingerprint).toMatch(/^[0-9a-f]{64}$/)
      await source.forward(PROMPT, 0)
      const next = PUBLISHED_STORIES260K_IDS[40]
      const exact = await source.readKv(0, PROMPT.length, 'f32')
      const half = await source.readKv(0, PROMPT.length, 'f16')
      expect(exact.byteLength).toBe(kvBlockBytes(header.config, 'f32', PROMPT.length))
      expect(half.byteLength * 2).toBe(exact.byteLength)
      const want = await source.forward([next], PROMPT.length)

      const restored = await open()
      await restored.writeKv(0, PROMPT.length, 'f32', exact.slice())
      expect(maxAbsDiff(await restored.forward([next], PROMPT.length), want)).toBe(0)
      // float16: a different cache, close but not the same bits
      const fromHalf = await open()
      await fromHalf.writeKv(0, PROMPT.length, 'f16', half)
      const got = await fromHalf.forward([next], PROMPT.length)
      expect(maxAbsDiff(got, want)).toBeLessThan(0.05)
      // a part of the snapshot: the first 16 positions, then the rest computed
      await restored.writeKv(0, 16, 'f32', exact.subarray(0, 16 * (exact.byteLength / PROMPT.length)))
      await expect(restored.writeKv(0, 16, 'f32', exact.subarray(0, 100))).rejects.toThrow(/needs \d+ bytes, got 100/)
    } finally {
      await Promise.all(workers.map((w) => w.dispose()))
    }
  }, 120_000)

  it('device workers hand out and take their caches by layer, also a layer held by two devices; another placement has another KV source', async () => {
    const header = await loadModel(sharedModel('stories260K/stories260K.gguf'))
    if (!header.weights) throw new Error('no weights')
    const devices = await discoverDevices()
    // prefill on cpu, decode on cpu-2 with layer 1's attention on cpu: layer 1's cache is held by both workers
    const placement = parsePlacement(
      { version: 1, name: 'kv test', prefillChunkTokens: 16, phases: { prefill: { device: 'cpu' }, decode: { device: 'cpu-2', groups: [{ layer: 1, group: 'attention', device: 'cpu' }] } } },
      header.config,
      devices,
      weightInfoOf(header.weights)
    )
    const workers: ModelWorkerClient[] = []
    try {
      const open = async (p: Placement | undefined): Promise<ModelWorkerClient> => {
        const w = await openModelWorker(header, { cacheDir: cache.dir, threads: 1, maxContext: 128, ...(p !== undefined && { placement: p, devices }) })
        workers.push(w)
        return w
      }
      const source = await open(placement)
      expect(source.kvSource).toMatch(/^device workers [0-9a-f]{64}$/)
      await source.forward(PROMPT, 0)
      const next = PUBLISHED_STORIES260K_IDS[40]
      const exact = await source.readKv(0, PROMPT.length, 'f32')
      expect(exact.byteLength).toBe(kvBlockBytes(header.config, 'f32', PROMPT.length))
      // the single session's cache of the same prompt: the same layout, values computed the same way on the CPU
      const single = await open(undefined)
      await single.forward(PROMPT, 0)
      expect(maxAbsDiff(new Float32Array((await single.readKv(0, PROMPT.length, 'f32')).buffer), new Float32Array(exact.slice().buffer))).toBeLessThan(1e-4)
      const want = await source.forward([next], PROMPT.length)

      const restored = await open(placement)
      expect(restored.kvSource).toBe(source.kvSource)
      await restored.writeKv(0, PROMPT.length, 'f32', exact.slice(), PROMPT.length + 8)
      expect(maxAbsDiff(await restored.forward([next], PROMPT.length), want)).toBe(0)
      // the decode after it ran on cpu-2 and on cpu (layer 1): both holders of layer 1 took the rows
      expect(maxAbsDiff(await restored.forward([PUBLISHED_STORIES260K_IDS[41]], PROMPT.length + 1), await source.forward([PUBLISHED_STORIES260K_IDS[41]], PROMPT.length + 1))).toBe(0)
      await expect(restored.writeKv(0, 4, 'f32', exact.subarray(0, 100))).rejects.toThrow(/needs \d+ bytes, got 100/)

      const other = await open(parsePlacement({ version: 1, name: 'other', prefillChunkTokens: 16, phases: { prefill: { device: 'cpu-2' }, decode: { device: 'cpu' } } }, header.config, devices, weightInfoOf(header.weights)))
      expect(other.kvSource).not.toBe(source.kvSource)
    } finally {
      await Promise.all(workers.map((w) => w.dispose()))
    }
  }, 120_000)

  it('a cache reads its positions as snapshot bytes and another takes them back: float32 exactly, float16 to half precision', () => {
    const shape = { nLayers: 2, nKvHeads: 2, headDim: 4, maxLen: 64 }
    const rng = (i: number): number => Math.sin(i * 12.9898) * 43.758
    const source = new KvCache(shape)
    const count = 40
    source.reserve(count)
    for (let l = 0; l < shape.nLayers; l++) {
      const k = Float32Array.from({ length: count * 8 }, (_, i) => rng(i + l * 1000))
      const v = Float32Array.from({ length: count * 8 }, (_, i) => rng(i + l * 1000 + 500))
      source.write(l, k, v, count)
    }
    source.commit(count)
    const exact = source.readSnapshot(10, 20, 'f32')
    expect(exact.byteLength).toBe(20 * 2 * 2 * 8 * 4)
    const target = new KvCache(shape)
    // positions 0..10 from elsewhere, then the snapshot of 10..30
    target.reserve(30)
    target.writeSnapshot(source.readSnapshot(0, 10, 'f32'), 10, 'f32')
    target.writeSnapshot(exact, 20, 'f32')
    for (let l = 0; l < 2; l++) for (let p = 0; p < 30; p++) expect(target.row(l, p)).toEqual(source.row(l, p))
    const half = new KvCache(shape)
    half.reserve(count)
    half.writeSnapshot(source.readSnapshot(0, count, 'f16'), count, 'f16')
    const a = source.row(1, 33)
    const b = half.row(1, 33)
    for (let i = 0; i < 8; i++) expect(Math.abs(a.keys[i] - b.keys[i])).toBeLessThanOrEqual(Math.abs(a.keys[i]) / 1024)
    // int8: a quarter of float32 plus a float32 scale per key channel (8) and per value head and position (2·count),
    // per layer; each value within half a step of its run's scale (max |v| / 127)
    const q = source.readSnapshot(0, count, 'i8')
    expect(q.byteLength).toBe(2 * 2 * 8 * count + 4 * 2 * (8 + 2 * count))
    const int8 = new KvCache(shape)
    int8.reserve(count)
    int8.writeSnapshot(q, count, 'i8')
    for (let l = 0; l < 2; l++) {
      const rows = Array.from({ length: count }, (_, p) => source.row(l, p))
      for (let c = 0; c < 8; c++) {
        const step = Math.max(...rows.map((r) => Math.abs(r.keys[c]))) / 127
        for (let p = 0; p < count; p++) expect(Math.abs(int8.row(l, p).keys[c] - rows[p].keys[c])).toBeLessThanOrEqual(step / 2 + 1e-6)
      }
      for (let p = 0; p < count; p++) {
        for (let h = 0; h < 2; h++) {
          const v = rows[p].values.subarray(h * 4, h * 4 + 4)
          const step = Math.max(...Array.from(v, Math.abs)) / 127
          const got = int8.row(l, p).values.subarray(h * 4, h * 4 + 4)
          for (let d = 0; d < 4; d++) expect(Math.abs(got[d] - v[d])).toBeLessThanOrEqual(step / 2 + 1e-6)
        }
      }
    }
    // unaligned bytes are read too; a wrong length is refused
    const shifted = new Uint8Array(exact.byteLength + 1)
    shifted.set(exact, 1)
    const again = new KvCache(shape)
    again.reserve(20)
    again.writeSnapshot(shifted.subarray(1), 20, 'f32')
    expect(again.row(0, 5)).toEqual(source.row(0, 15))
    again.truncate(0)
    expect(() => again.writeSnapshot(exact.subarray(1), 20, 'f32')).toThrow(/needs 2560 bytes, got 2559/)
    expect(again.length).toBe(0)
  })
})
