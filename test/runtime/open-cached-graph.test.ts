import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DEFAULT_MAX_CONTEXT, MAX_ROPE_TABLE_POSITIONS, resolveContext } from '../../main/engine/runtime/context'
import { openCachedGraph } from '../../main/engine/runtime/session/open-cached-graph'
import { ContextOverflowError } from '../../main/engine/runtime/errors'
import { SingleSessionEngine } from '../../main/engine/runtime/session/single-session-engine'
import { tempDir } from '../helpers/paths'
import { randomModel } from '../graph/random-model'

describe('compile-or-reuse', () => {
  it('reuses the cached graph on the second open and recompiles over a corrupt file', async () => {
    const tmp = tempDir()
    const model = randomModel({ seed: 41, dim: 128, hiddenDim: 256, nLayers: 3 })
    const options = { cacheDir: tmp.dir, threads: 1, graph: { ropeTableLength: 32 } }
    try {
      const first = await openCachedGraph(model, options)
      await first.session.release()
      expect(first.info.cacheHit).toBe(false)
      const written = statSync(first.info.graphPath)
      const second = await openCachedGraph(model, options)
      await second.session.release()
      expect(second.info.cacheHit).toBe(true)
      expect(second.info.graphPath).toBe(first.info.graphPath)
      // reused, not compiled again: a rebuild is written to a temp file and renamed over, a new inode
      expect(statSync(second.info.graphPath)).toMatchObject({ ino: written.ino, mtimeMs: written.mtimeMs, size: written.size })
      const good = readFileSync(first.info.graphPath)

      // truncated file (a crash mid-write by something else): detected by the failed load, rebuilt
      writeFileSync(first.info.graphPath, good.subarray(0, good.length >> 1))
      const third = await openCachedGraph(model, options)
      expect(third.info.cacheHit).toBe(false)
      expect(readFileSync(third.info.graphPath).equals(good)).toBe(true)
      const engine = new SingleSessionEngine(model, third.session, { contextLength: 32, prefillChunkTokens: 16 })
      expect((await engine.forward([1, 2, 3], 0)).length).toBe(model.config.vocabSize)
      await engine.dispose()

      // garbage bytes
      writeFileSync(first.info.graphPath, 'not an onnx model')
      const fourth = await openCachedGraph(model, options)
      await fourth.session.release()
      expect(fourth.info.cacheHit).toBe(false)
    } finally {
      tmp.dispose()
    }
  })
})

describe('context length policy', () => {
  it('caps the default context, keeps the RoPE table independent of maxContext', () => {
    const { config } = randomModel({ seed: 1 })
    const long = { ...config, contextLength: 131072 }
    expect(resolveContext(long)).toEqual({ contextLength: DEFAULT_MAX_CONTEXT, ropeTableLength: MAX_ROPE_TABLE_POSITIONS })
    expect(resolveContext(long, 100)).toEqual({ contextLength: 100, ropeTableLength: MAX_ROPE_TABLE_POSITIONS })
    expect(resolveContext(long, 10 ** 6).contextLength).toBe(MAX_ROPE_TABLE_POSITIONS)
    expect(resolveContext({ ...config, contextLength: 512 }, 8192)).toEqual({ contextLength: 512, ropeTableLength: 512 })
  })
})

describe('SingleSessionEngine', () => {
  it('rewinds for regenerate, refuses gaps and context overflow, validates tokens', async () => {
    const tmp = tempDir()
    const model = randomModel({ seed: 42 })
    try {
      const { session } = await openCachedGraph(model, { cacheDir: tmp.dir, threads: 1, graph: { ropeTableLength: 12 } })
      const engine = new SingleSessionEngine(model, session, { contextLength: 12, prefillChunkTokens: 3 })
      try {
        const a = await engine.forward([5, 6, 7, 8], 0)
        const b1 = await engine.forward([9], 4)
        expect(engine.cacheLength).toBe(5)
        // explicit truncate, then the same step again
        await engine.truncate(4)
        expect([...(await engine.forward([9], 4))]).toEqual([...b1])
        // implicit rewind: forward at an earlier position drops what followed
        const again = await engine.forward([5, 6, 7, 8], 0)
        for (let i = 0; i < a.length; i++) expect(Math.abs(again[i] - a[i])).toBeLessThan(1e-6)
        expect(engine.cacheLength).toBe(4)
        await expect(engine.forward([1], 6)).rejects.toThrow(/past the cached length/)
        await expect(engine.forward([1, 2, 3, 4, 5, 6, 7, 8, 9], 4)).rejects.toThrow(ContextOverflowError)
        await expect(engine.forward([model.config.vocabSize], 4)).rejects.toThrow(/outside the vocabulary/)
        expect(engine.cacheLength).toBe(4)
        // fills the context exactly
        expect((await engine.forward([1, 2, 3, 4, 5, 6, 7, 8], 4)).length).toBe(model.config.vocabSize)
        await expect(engine.forward([1], 12)).rejects.toThrow(ContextOverflowError)
      } finally {
        await engine.dispose()
      }
    } finally {
      tmp.dispose()
    }
  })
})
