import { appendFileSync, closeSync, copyFileSync, openSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadModel } from '../../main/engine/model'
import { createReferenceState, referenceForward } from '../../main/engine/model'
import { ContextOverflowError, WorkerExitedError } from '../../main/engine/runtime/errors'
import { openModelWorker, type ModelWorkerClient } from '../../main/engine/runtime/model-worker/model-worker-client'
import { sharedModel, tempDir } from '../helpers/paths'
import { PUBLISHED_STORIES260K_IDS, PUBLISHED_TINYSTORIES_IDS } from '../helpers/published'
import { argmax, INT8_FLIP_TOLERANCE } from '../graph/compare'
import { int8RoundingOf } from '../../main/engine/graph'
import { resolveContext } from '../../main/engine/runtime/context'

/** Greedy ids after BOS (1), one forward per token. */
async function greedy(runner: ModelWorkerClient, count: number): Promise<{ ids: number[]; tokensPerSecond: number }> {
  const ids: number[] = []
  let token = 1
  const t0 = performance.now()
  for (let pos = 0; pos < count; pos++) {
    token = argmax(await runner.forward([token], pos))
    ids.push(token)
  }
  return { ids, tokensPerSecond: (count * 1000) / (performance.now() - t0) }
}

describe('ModelWorkerClient (worker thread)', () => {
  it('stories260K.bin reproduces the published greedy ids; the second load hits the graph cache', async () => {
    const tmp = tempDir()
    try {
      const first = await openModelWorker(sharedModel('stories260K/stories260K.bin'), { cacheDir: tmp.dir, threads: 1 })
      let r: Awaited<ReturnType<typeof greedy>>
      try {
        expect(first.compileInfo.cacheHit).toBe(false)
        expect(first.contextLength).toBe(512)
        r = await greedy(first, PUBLISHED_STORIES260K_IDS.length)
        expect(r.ids).toEqual(PUBLISHED_STORIES260K_IDS)
      } finally {
        await first.dispose()
      }
      const written = statSync(first.compileInfo.graphPath)
      const second = await openModelWorker(sharedModel('stories260K/stories260K.bin'), { cacheDir: tmp.dir, threads: 1 })
      try {
        expect(second.compileInfo.cacheHit).toBe(true)
        expect(second.compileInfo.graphPath).toBe(first.compileInfo.graphPath)
        // reused, not compiled again: a rebuild is written to a temp file and renamed over, a new inode
        expect(statSync(second.compileInfo.graphPath)).toMatchObject({ ino: written.ino, mtimeMs: written.mtimeMs, size: written.size })
        expect((await greedy(second, 8)).ids).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, 8))
      } finally {
        await second.dispose()
      }
      console.log(
        `stories260K: compile ${first.compileInfo.compileMs.toFixed(1)} ms, session ${first.compileInfo.sessionMs.toFixed(1)} ms; ` +
          `cached: hash ${second.compileInfo.compileMs.toFixed(1)} ms, session ${second.compileInfo.sessionMs.toFixed(1)} ms; ` +
          `decode ${r.tokensPerSecond.toFixed(0)} tokens/s (1 thread, incl. worker round trip)`
      )
    } finally {
      tmp.dispose()
    }
  })

  it('stories260K.gguf reproduces the published greedy ids', async () => {
    const tmp = tempDir()
    const runner = await openModelWorker(sharedModel('stories260K/stories260K.gguf'), { cacheDir: tmp.dir, threads: 1, maxContext: 512 })
    try {
      expect(runner.contextLength).toBe(512)
      expect((await greedy(runner, PUBLISHED_STORIES260K_IDS.length)).ids).toEqual(PUBLISHED_STORIES260K_IDS)
    } finally {
      await runner.dispose()
      tmp.dispose()
    }
  })

  it('TinyStories-656K reproduces the published greedy ids', async () => {
    const tmp = tempDir()
    const runner = await openModelWorker(sharedModel('tinystories-656K'), { cacheDir: tmp.dir, threads: 1 })
    try {
      expect((await greedy(runner, PUBLISHED_TINYSTORIES_IDS.length)).ids).toEqual(PUBLISHED_TINYSTORIES_IDS)
    } finally {
      await runner.dispose()
      tmp.dispose()
    }
  })

  it('stories260K_q80.bin (int8 groups, int8 activations) matches the emulating reference; greedy ids vs the float reference', async () => {
    const tmp = tempDir()
    const path = sharedModel('stories260K/stories260K_q80.bin')
    const tokenizerPath = sharedModel('stories260K/tok512.bin')
    const model = await loadModel(path, { tokenizerPath })
    if (!model.weights) throw new Error('no weights')
    const ref = { config: model.config, weights: model.weights }
    const maxContext = 96
    // the runner compiles with the default options: int8 activations over the RoPE table resolveContext picks
    const graph = { ropeTableLength: resolveContext(model.config, maxContext).ropeTableLength }
    const emulating = createReferenceState(model.config, maxContext, { int8Activations: (t) => int8RoundingOf(t, graph) })
    const plain = createReferenceState(model.config, maxContext)
    const runner = await openModelWorker(path, { cacheDir: tmp.dir, threads: 1, tokenizerPath, maxContext })
    try {
      const prompt = [1, 403, 407, 261, 378]
      let want = new Float32Array(0)
      for (let p = 0; p < prompt.length; p++) want = referenceForward(ref, emulating, prompt[p], p).slice()
      let got = await runner.forward(prompt, 0)
      for (let step = 0; step < 6; step++) {
        let maxDiff = 0
        let scale = 0
        for (let i = 0; i < want.length; i++) {
          maxDiff = Math.max(maxDiff, Math.abs(got[i] - want[i]))
          scale = Math.max(scale, Math.abs(want[i]))
        }
        expect(maxDiff).toBeLessThan(INT8_FLIP_TOLERANCE * scale)
        const next = argmax(want)
        expect(argmax(got)).toBe(next)
        want = referenceForward(ref, emulating, next, prompt.length + step).slice()
        got = await runner.forward([next], prompt.length + step)
      }

      // greedy continuation from BOS: int8-activation graph vs the plain float32 reference
      const steps = 80
      await runner.truncate(0)
      let graphToken = 1
      let refToken = 1
      let agree = 0
      for (let pos = 0; pos < steps; pos++) {
        graphToken = argmax(await runner.forward([graphToken], pos))
        refToken = argmax(referenceForward(ref, plain, refToken, pos))
        if (graphToken !== refToken) break
        agree++
      }
      console.log(`stories260K_q80: int8-activation greedy ids agree with the float32 reference for ${agree} of ${steps} tokens`)
      expect(agree).toBeGreaterThanOrEqual(16)
    } finally {
      await runner.dispose()
      tmp.dispose()
    }
  })

  it('rejects a forward past the context with a context-overflow error, rewinds on truncate, rejects calls after dispose', async () => {
    const tmp = tempDir()
    const runner = await openModelWorker(sharedModel('stories260K/stories260K.bin'), { cacheDir: tmp.dir, threads: 1, maxContext: 8 })
    try {
      expect(runner.contextLength).toBe(8)
      await expect(runner.forward([1, 2, 3, 4, 5, 6, 7, 8, 9], 0)).rejects.toThrow(ContextOverflowError)
      const a = await runner.forward([1, 403, 407], 0)
      await runner.forward([261, 378, 432, 383, 286], 3)
      await expect(runner.forward([1], 8)).rejects.toThrow(/context overflow/)
      await runner.truncate(2)
      const again = await runner.forward([407], 2)
      // the same position, now attending to cached rows instead of the run's own: equal up to summation order
      for (let i = 0; i < a.length; i++) expect(Math.abs(again[i] - a[i])).toBeLessThan(1e-5 * Math.max(1, Math.abs(a[i])))
      // errors raised in the worker come back with their message
      await expect(runner.forward([9999], 3)).rejects.toThrow(/outside the vocabulary/)
      await runner.dispose()
      await expect(runner.forward([1], 0)).rejects.toThrow(WorkerExitedError)
    } finally {
      await runner.dispose()
      tmp.dispose()
    }
  })

  it('fails to start with the loader error', async () => {
    const tmp = tempDir()
    try {
      await expect(openModelWorker(`${tmp.dir}/missing.gguf`, { cacheDir: tmp.dir })).rejects.toThrow(/missing\.gguf/)
    } finally {
      tmp.dispose()
    }
  })

  it('parses the header once, on the caller\'s side: the worker reads only the weights, where the layout says', async () => {
    const tmp = tempDir()
    try {
      const copy = join(tmp.dir, 'stories.gguf')
      copyFileSync(sharedModel('stories260K/stories260K.gguf'), copy)
      const header = await loadModel(copy, { weights: false })
      // break the file's header (its magic) but not its size or weights: a second parse would fail on it
      const fd = openSync(copy, 'r+')
      writeSync(fd, Buffer.from('XXXX'), 0, 4, 0)
      closeSync(fd)
      await expect(loadModel(copy, { weights: false })).rejects.toThrow()
      const client = await openModelWorker(header, { cacheDir: tmp.dir, threads: 1 })
      try {
        expect((await greedy(client, 8)).ids).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, 8))
      } finally {
        await client.dispose()
      }
      // a file that changed size since its header was read is refused, naming it
      appendFileSync(copy, Buffer.alloc(16))
      await expect(openModelWorker(header, { cacheDir: tmp.dir })).rejects.toThrow(/stories\.gguf.*changed since its header was read/)
    } finally {
      tmp.dispose()
    }
  })
})
