import { readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { graphCacheKey, modelContentHash, modelFingerprint, modelOpGroups, resolveGraphCacheDir, segmentCacheKey, segmentSpec, wholeModelSegment, writeGraphAtomic, cachedGraphExists, cachedGraphPath } from '../../main/engine/graph'
import { tempDir } from '../helpers/paths'
import { randomModel } from './random-model'

const OPTIONS = { ropeTableLength: 32 }

describe('graph cache key', () => {
  it('is stable for equal content and changes with weights bytes, config and graph options', () => {
    const a = randomModel({ seed: 1 })
    const key = graphCacheKey(a, OPTIONS)
    expect(key).toMatch(/^[0-9a-f]{64}$/)
    expect(graphCacheKey(randomModel({ seed: 1 }), OPTIONS)).toBe(key)
    expect(graphCacheKey(a, { ropeTableLength: 33 })).not.toBe(key)
    expect(graphCacheKey({ ...a, config: { ...a.config, normEps: 1e-6 } }, OPTIONS)).not.toBe(key)
    // flip one byte of one weight
    const w = a.weights.layers[1].wUp.data
    if (w.kind !== 'dense') throw new Error('expected dense')
    w.bytes[100] ^= 1
    expect(graphCacheKey(a, OPTIONS)).not.toBe(key)
  })

  it('samples first, middle and last rows; the full content hash sees every byte', () => {
    const a = randomModel({ seed: 4 })
    const fingerprint = modelFingerprint(a)
    const content = modelContentHash(a)
    const w = a.weights.layers[0].wGate
    if (w.data.kind !== 'dense' || w.shape[0] < 5) throw new Error('expected a dense weight with at least 5 rows')
    const rowBytes = w.data.bytes.byteLength / w.shape[0]
    // row 1 is not sampled: the fingerprint keeps its value, the content hash (recorded beside each compiled graph) does not
    w.data.bytes[rowBytes + 3] ^= 1
    expect(modelFingerprint(a)).toBe(fingerprint)
    expect(modelContentHash(a)).not.toBe(content)
    // the last row is sampled
    w.data.bytes[w.data.bytes.byteLength - 1] ^= 1
    expect(modelFingerprint(a)).not.toBe(fingerprint)
  })
})

describe('segment cache keys', () => {
  it('hash the model once and tell segments, row parts, targets and models apart', () => {
    const a = randomModel({ seed: 2 })
    const hash = modelFingerprint(a)
    const all = modelOpGroups(a.config)
    const first = segmentSpec(a.config, all.slice(0, 3), all)
    const rest = segmentSpec(a.config, all.slice(3), all)
    const key = segmentCacheKey(hash, first, OPTIONS)
    expect(segmentCacheKey(hash, first, OPTIONS)).toBe(key)
    expect(segmentCacheKey(hash, rest, OPTIONS)).not.toBe(key)
    expect(segmentCacheKey(hash, first, { ...OPTIONS, target: 'webgpu' })).not.toBe(key)
    expect(segmentCacheKey(modelFingerprint(randomModel({ seed: 3 })), first, OPTIONS)).not.toBe(key)
    expect(segmentCacheKey(hash, wholeModelSegment(a.config), OPTIONS)).toBe(graphCacheKey(a, OPTIONS))
  })
})

describe('graph cache folder', () => {
  const saved = { t: process.env.TANDEM_CACHE_DIR, x: process.env.XDG_CACHE_HOME }
  afterEach(() => {
    for (const [k, v] of [['TANDEM_CACHE_DIR', saved.t], ['XDG_CACHE_HOME', saved.x]] as const) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  })

  it('prefers the explicit option, then TANDEM_CACHE_DIR, then XDG_CACHE_HOME, then ~/.cache', () => {
    process.env.TANDEM_CACHE_DIR = '/t/env'
    process.env.XDG_CACHE_HOME = '/t/xdg'
    expect(resolveGraphCacheDir('/t/opt')).toBe('/t/opt')
    expect(resolveGraphCacheDir()).toBe('/t/env')
    delete process.env.TANDEM_CACHE_DIR
    expect(resolveGraphCacheDir()).toBe('/t/xdg/tandem/graphs')
    delete process.env.XDG_CACHE_HOME
    expect(resolveGraphCacheDir()).toMatch(/\.cache\/tandem\/graphs$/)
  })
})

describe('atomic graph writes', () => {
  it('writes through a temp file and replaces an existing file, leaving no temp files', async () => {
    const tmp = tempDir()
    try {
      const path = cachedGraphPath(join(tmp.dir, 'nested'), 'abc')
      expect(await cachedGraphExists(path)).toBe(false)
      await writeGraphAtomic(path, new Uint8Array([1, 2, 3]))
      await writeGraphAtomic(path, new Uint8Array([4, 5]))
      expect([...readFileSync(path)]).toEqual([4, 5])
      expect(readdirSync(join(tmp.dir, 'nested'))).toEqual(['abc.onnx'])
      expect(await cachedGraphExists(path)).toBe(true)
      writeFileSync(path, '')
      expect(await cachedGraphExists(path)).toBe(false)
    } finally {
      tmp.dispose()
    }
  })
})
