/**
 * The one prefill chunk: without a placement the planner's default (or the caller's, e.g. --prefill-chunk),
 * with one the placement's own — and the prompt is cut in one place, the engine, into exactly that many
 * session runs (counted on the usage board, which counts every session.run). Cancelling stops between chunks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createSession, discoverDevices, type DeviceInfo } from '../../main/engine/devices'
import { compileModel } from '../../main/engine/graph'
import { loadModel, type ModelConfig } from '../../main/engine/model'
import { buildPreset, DEFAULT_PREFILL_CHUNK_TOKENS, maxPrefillChunkTokens } from '../../main/engine/plan'
import { ForwardCancelledError } from '../../main/engine/runtime/errors'
import { openModelWorker, type ModelWorkerClient, type ModelWorkerOptions } from '../../main/engine/runtime/model-worker/model-worker-client'
import { SingleSessionEngine } from '../../main/engine/runtime/session/single-session-engine'
import { UsageBoard } from '../../main/engine/runtime/usage'
import { argmax } from '../graph/compare'
import { sharedModel, tempDir } from '../helpers/paths'

const STORIES = 'stories260K/stories260K.gguf'
/** A prompt longer than the default chunk, so every setting runs several chunks. */
const PROMPT_TOKENS = 300

const tmp = tempDir()
let config: ModelConfig
let devices: DeviceInfo[]
const prompt = Array.from({ length: PROMPT_TOKENS }, (_, i) => 1 + ((i * 37) % 500))

beforeAll(async () => {
  config = (await loadModel(sharedModel(STORIES), { weights: false })).config
  // the CPU needs no probe: it is always ready
  devices = await discoverDevices({ probe: false })
})
afterAll(() => tmp.dispose())

/** Runs the prompt in one forward and returns the session runs it took and its greedy next token. */
async function prefill(options: ModelWorkerOptions): Promise<{ runs: number; next: number; client: ModelWorkerClient }> {
  const client = await openModelWorker(sharedModel(STORIES), { cacheDir: tmp.dir, threads: 1, ...options })
  const before = client.usage().devices[0]?.runs ?? 0
  const next = argmax(await client.forward(prompt, 0))
  return { runs: client.usage().devices[0].runs - before, next, client }
}

describe('one prefill chunk, cut in one place', () => {
  it('runs the default chunk without a placement, the caller\'s when given, and a CPU placement\'s own, as one session', async () => {
    expect(config.contextLength).toBeGreaterThan(PROMPT_TOKENS)
    const byDefault = await prefill({})
    const byOption = await prefill({ prefillChunkTokens: 100 })
    const { placement } = buildPreset('cpu', config, devices, { prefillChunkTokens: 64 })
    const byPlacement = await prefill({ placement, devices })
    try {
      expect(byDefault.runs).toBe(Math.ceil(PROMPT_TOKENS / DEFAULT_PREFILL_CHUNK_TOKENS))
      expect(byOption.runs).toBe(Math.ceil(PROMPT_TOKENS / 100))
      expect(byPlacement.runs).toBe(Math.ceil(PROMPT_TOKENS / 64))
      // the CPU placement runs as the single session (its compiled graph file), on the cpu device
      expect(byPlacement.client.compileInfo.graphPath).toMatch(/\.onnx$/)
      expect(byPlacement.client.usage().devices.map((d) => d.id)).toEqual(['cpu'])
      // how the prompt was cut does not change what comes next
      expect(new Set([byDefault.next, byOption.next, byPlacement.next]).size).toBe(1)
    } finally {
      await Promise.all([byDefault.client.dispose(), byOption.client.dispose(), byPlacement.client.dispose()])
    }
  })

  it('refuses a chunk outside [1, the model\'s maximum], naming the range', async () => {
    const max = maxPrefillChunkTokens(config)
    await expect(openModelWorker(sharedModel(STORIES), { cacheDir: tmp.dir, prefillChunkTokens: max + 1 })).rejects.toThrow(`prefillChunkTokens must be an integer in [1, ${max}]`)
  })

  it('the engine stops between chunks when asked, keeping what ran; the next forward rewinds and matches a fresh run', async () => {
    const model = await loadModel(sharedModel(STORIES))
    if (model.weights === null) throw new Error('no weights')
    const compilable = { config: model.config, weights: model.weights }
    const session = await createSession(compileModel(compilable, { ropeTableLength: model.config.contextLength }), { ep: 'cpu', intraOpThreads: 1 })
    const board = new UsageBoard()
    const engine = new SingleSessionEngine(compilable, session, { contextLength: model.config.contextLength, prefillChunkTokens: 50, usage: { board, slot: 0 } })
    try {
      let asked = 0
      await expect(engine.forward(prompt, 0, () => ++asked >= 2)).rejects.toThrow(ForwardCancelledError)
      // asked before chunks 2 and 3: two chunks ran and stay cached
      expect(asked).toBe(2)
      expect(engine.cacheLength).toBe(100)
      expect(board.read(['cpu']).devices[0].runs).toBe(2)
      const again = argmax(await engine.forward(prompt, 0))
      expect(board.read(['cpu']).devices[0].runs).toBe(2 + Math.ceil(PROMPT_TOKENS / 50))
      const fresh = await prefill({ prefillChunkTokens: 50 })
      try {
        expect(again).toBe(fresh.next)
      } finally {
        await fresh.client.dispose()
      }
    } finally {
      await engine.dispose()
    }
  })

  it('a worker forward stops when its signal aborts: before it starts nothing runs; mid-prompt it ends cancelled or complete, never broken', async () => {
    const client = await openModelWorker(sharedModel(STORIES), { cacheDir: tmp.dir, threads: 1, prefillChunkTokens: 50 })
    try {
      await expect(client.forward(prompt, 0, AbortSignal.abort())).rejects.toThrow(ForwardCancelledError)
      expect(client.usage().devices[0].runs).toBe(0)
      const controller = new AbortController()
      const forward = client.forward(prompt, 0, controller.signal)
      controller.abort()
      // which chunk the worker is in when the abort lands depends on the machine; both outcomes are consistent
      const outcome = await forward.then(
        () => 'complete',
        (err: unknown) => (err instanceof ForwardCancelledError ? 'cancelled' : err)
      )
      const runs = client.usage().devices[0].runs
      if (outcome === 'cancelled') expect(runs).toBeLessThan(Math.ceil(PROMPT_TOKENS / 50))
      else expect(outcome).toBe('complete')
      expect(runs).toBeGreaterThanOrEqual(1)
      const again = argmax(await client.forward(prompt, 0))
      expect(again).toBe(argmax(await client.forward(prompt, 0)))
    } finally {
      await client.dispose()
    }
  })
})
