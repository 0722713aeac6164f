import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import onnxProto from 'onnx-proto'
import { EXTERNAL_ALIGNMENT, EXTERNAL_MIN_BYTES, graphDataPath, graphHashPath, modelContentHash } from '../../main/engine/graph'
import type { LoadProgress } from '../../main/engine/runtime/load-progress'
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

describe('external weights and load progress', () => {
  it('keeps large weights aligned in a data file beside the graph, records the content hash, and reports what it does', async () => {
    const tmp = tempDir()
    const model = randomModel({ seed: 43, dim: 128, hiddenDim: 256, nLayers: 2 })
    const seen: LoadProgress[] = []
    const options = { cacheDir: tmp.dir, threads: 1, graph: { ropeTableLength: 32 }, onProgress: (p: LoadProgress) => seen.push(p) }
    try {
      const first = await openCachedGraph(model, options)
      await first.session.release()
      const path = first.info.graphPath
      // the graph names its large initializers' places in the data file; each starts on the alignment
      const proto = onnxProto.onnx.ModelProto.decode(readFileSync(path))
      const external = (proto.graph?.initializer ?? []).filter((t) => t.dataLocation === onnxProto.onnx.TensorProto.DataLocation.EXTERNAL)
      expect(external.length).toBeGreaterThan(0)
      const dataBytes = statSync(graphDataPath(path)).size
      for (const t of external) {
        const info = Object.fromEntries((t.externalData ?? []).map((e) => [e.key, e.value]))
        expect(info.location).toBe(graphDataPath(path).split('/').at(-1))
        expect(Number(info.offset) % EXTERNAL_ALIGNMENT).toBe(0)
        expect(Number(info.length)).toBeGreaterThanOrEqual(EXTERNAL_MIN_BYTES)
        expect(Number(info.offset) + Number(info.length)).toBeLessThanOrEqual(dataBytes)
      }
      expect(readFileSync(graphHashPath(path), 'utf8').trim()).toBe(modelContentHash(model))
      // a miss compiles (group by group), hashes the bytes, then prepares
      const stages = [...new Set(seen.map((p) => p.stage))]
      expect(stages).toEqual(['compiling', 'reading', 'preparing'])
      const compiling = seen.filter((p) => p.stage === 'compiling')
      expect(compiling.at(-1)).toMatchObject({ done: compiling[0].total })
      expect(compiling.every((p, i) => i === 0 || p.done > compiling[i - 1].done)).toBe(true)
      const reading = seen.filter((p) => p.stage === 'reading')
      expect(reading.at(-1)?.done).toBe(reading[0].total)

      // a hit only prepares
      seen.length = 0
      const second = await openCachedGraph(model, options)
      await second.session.release()
      expect(second.info.cacheHit).toBe(true)
      expect(seen).toEqual([{ stage: 'preparing', done: 0, total: 0 }])

      // a lost data file: the graph does not load, so it is compiled again
      rmSync(graphDataPath(path))
      const third = await openCachedGraph(model, options)
      await third.session.release()
      expect(third.info.cacheHit).toBe(false)
      expect(statSync(graphDataPath(path)).size).toBe(dataBytes)
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
