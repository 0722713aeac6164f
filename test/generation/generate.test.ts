/**
 * The generation loop on the oracle (ReferenceRunner) with the real stories260K weights and tokenizer:
 * greedy text, chunked prefill, KV reuse, stop rules, abort and context limits.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { loadModel, type LoadedModel } from '../../main/engine/model'
import { GenerationLoop } from '../../main/engine/runtime/generation/generation-loop'
import { ContextOverflowError } from '../../main/engine/runtime/errors'
import { sharedModel } from '../helpers/paths'
import { ReferenceRunner } from '../helpers/reference-runner'
import { PUBLISHED_STORIES260K_IDS } from '../helpers/published'

let model: LoadedModel
const greedy = { temperature: 0 }

beforeAll(async () => {
  model = await loadModel(sharedModel('stories260K/stories260K.bin'))
})

function generator(contextLength?: number): { gen: GenerationLoop; runner: ReferenceRunner } {
  const runner = new ReferenceRunner(model, contextLength)
  return { gen: new GenerationLoop(runner, model.tokenizer, model.config.vocabSize), runner }
}

describe('generation loop on the reference forward', () => {
  it('greedy from BOS reproduces the published stories260K ids and text, streamed in pieces', async () => {
    const { gen } = generator()
    const g = gen.generate({ promptIds: [1], maxTokens: 64, sampling: greedy, stopTokenIds: [1, 2] })
    const pieces: string[] = []
    const ids: number[] = []
    for await (const e of g) {
      pieces.push(e.text)
      ids.push(e.tokenId)
    }
    const r = await g.result
    expect(r.tokens).toEqual(PUBLISHED_STORIES260K_IDS)
    expect(ids).toEqual(PUBLISHED_STORIES260K_IDS)
    expect(pieces.join('')).toBe(r.text)
    expect(r.text.startsWith('Once upon a time, there was a little girl named Lily.')).toBe(true)
    expect(r.stopReason).toBe('max-tokens')
    expect(r.stats.generatedTokens).toBe(64)
    expect(r.stats.ttftMs).toBeGreaterThan(0)
    expect(r.stats.decodeTokensPerSec).toBeGreaterThan(0)
  })

  it('hands the whole prompt to the runner in one forward (the engine cuts it into chunks), then one forward per token', async () => {
    const prompt = model.tokenizer.encode('Once upon a time, there was a big dog', { addBos: true })
    const { gen, runner } = generator()
    const r = await gen.generate({ promptIds: prompt, maxTokens: 12, sampling: greedy }).result
    expect(r.stats.generatedTokens).toBe(12)
    expect(runner.calls).toBe(1 + 11)
  })

  it('reuses the KV cache for a prompt that extends the previous one', async () => {
    const { gen } = generator()
    const first = model.tokenizer.encode('Lily saw a cat', { addBos: true })
    const a = await gen.generate({ promptIds: first, maxTokens: 5, sampling: greedy }).result
    const second = [...first, ...a.tokens, ...model.tokenizer.encode('The cat', { addBos: false })]
    const b = await gen.generate({ promptIds: second, maxTokens: 8, sampling: greedy }).result
    expect(b.stats.prefillTokens).toBeLessThan(second.length)
    const fresh = await generator().gen.generate({ promptIds: second, maxTokens: 8, sampling: greedy }).result
    expect(b.tokens).toEqual(fresh.tokens)
  })

  it('stop strings end the text before the stop string', async () => {
    const { gen } = generator()
    const r = await gen.generate({ promptIds: [1], maxTokens: 64, sampling: greedy, stopStrings: ['Lily'] }).result
    expect(r.stopReason).toBe('stop-string')
    expect(r.text).toBe('Once upon a time, there was a little girl named ')
  })

  it('an AbortSignal stops mid-stream and keeps what was generated', async () => {
    const { gen } = generator()
    const abort = new AbortController()
    const g = gen.generate({ promptIds: [1], maxTokens: 200, sampling: greedy, signal: abort.signal })
    let n = 0
    for await (const e of g) {
      if (e.tokenId >= 0 && ++n === 5) abort.abort()
    }
    const r = await g.result
    // The loop runs ahead of the consumer by at most the events already queued; it stops at the next step.
    expect(r.stopReason).toBe('aborted')
    expect(r.tokens.length).toBeGreaterThanOrEqual(5)
    expect(r.tokens.length).toBeLessThan(200)
    expect(r.text).toBe(model.tokenizer.decode([1, ...r.tokens]))
  })

  it('a prompt longer than the context is a clear error; reaching the context ends with context-full', async () => {
    const { gen } = generator(16)
    expect(() => gen.generate({ promptIds: new Array(16).fill(300), maxTokens: 4 })).toThrow(ContextOverflowError)
    const r = await gen.generate({ promptIds: [1, 403, 407], maxTokens: 100, sampling: greedy }).result
    expect(r.stopReason).toBe('context-full')
    expect(r.promptTokens.length + r.tokens.length).toBe(17) // 16 positions computed + the last sampled token
  })

  it('awaits the pace before every token after the first, and an abort while it waits ends the loop there', async () => {
    const { gen, runner } = generator()
    const abort = new AbortController()
    const tokensAtPace: number[] = []
    const held: { release?: () => void } = {}
    const g = gen.generate({
      promptIds: [1],
      maxTokens: 64,
      sampling: greedy,
      signal: abort.signal,
      // the 5th wait holds until the abort below; the others pass at once
      pace: () => {
        tokensAtPace.push(runner.calls)
        return tokensAtPace.length < 5 ? Promise.resolve() : new Promise<void>((resolve) => (held.release = resolve))
      }
    })
    const ids: number[] = []
    for await (const e of g) {
      ids.push(e.tokenId)
      if (ids.length === 5) {
        // the loop waits in the pace: nothing more is computed however long this takes
        await new Promise((r) => setTimeout(r, 0))
        expect(runner.calls).toBe(6)
        abort.abort()
        held.release?.()
      }
    }
    const r = await g.result
    expect(r.stopReason).toBe('aborted')
    expect(r.tokens).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, 5))
    // one wait per token after the first, each after that token's forward (prompt + 1 per token so far)
    expect(tokensAtPace).toEqual([2, 3, 4, 5, 6])
  })

  it('stop token ids end generation', async () => {
    const { gen } = generator()
    const r = await gen.generate({ promptIds: [1], maxTokens: 64, sampling: greedy, stopTokenIds: [PUBLISHED_STORIES260K_IDS[3]] }).result
    expect(r.stopReason).toBe('eos')
    expect(r.tokens).toEqual(PUBLISHED_STORIES260K_IDS.slice(0, 3))
  })
})
