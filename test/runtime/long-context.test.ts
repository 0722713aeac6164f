/**
 * The engine past its KV cache's first capacity: chunked prefill, decode steps that grow the cache,
 * a rewind and regeneration — every step against the reference forward.
 */
import { describe, expect, it } from 'vitest'
import { createSession } from '../../main/engine/devices'
import { compileModel } from '../../main/engine/graph'
import { createReferenceState, referenceForward } from '../../main/engine/model/reference'
import { MIN_KV_CAPACITY } from '../../main/engine/runtime/session/kv-cache'
import { SingleSessionEngine } from '../../main/engine/runtime/session/single-session-engine'
import { argmax, EXACT_TOLERANCE } from '../graph/compare'
import { randomModel } from '../graph/random-model'

describe('SingleSessionEngine over a growing cache', () => {
  it('matches the reference through growth, chunked prefill, decode and regenerate', async () => {
    const model = randomModel({ seed: 71, dim: 32, nHeads: 4, nKvHeads: 2, hiddenDim: 64, nLayers: 2, contextLength: 512, ropePairing: 'rotate-half' })
    const contextLength = 400
    const session = await createSession(compileModel(model, { ropeTableLength: contextLength }), { ep: 'cpu', intraOpThreads: 1 })
    const engine = new SingleSessionEngine(model, session, { contextLength, prefillChunkTokens: 48 })
    const state = createReferenceState(model.config, contextLength)
    const prompt = Array.from({ length: MIN_KV_CAPACITY - 3 }, (_, i) => (i * 31 + 7) % model.config.vocabSize)
    let worst = 0
    let scale = 0
    const check = (got: Float32Array, want: Float32Array): void => {
      for (let i = 0; i < want.length; i++) {
        worst = Math.max(worst, Math.abs(got[i] - want[i]))
        scale = Math.max(scale, Math.abs(want[i]))
      }
      expect(argmax(got)).toBe(argmax(want))
    }
    try {
      let want = new Float32Array(0)
      for (let p = 0; p < prompt.length; p++) want = referenceForward(model, state, prompt[p], p).slice()
      check(await engine.forward(prompt, 0), want)
      // decode across the first growth (capacity MIN_KV_CAPACITY)
      let pos = prompt.length
      for (let s = 0; s < 12; s++, pos++) {
        const next = argmax(want)
        want = referenceForward(model, state, next, pos).slice()
        check(await engine.forward([next], pos), want)
      }
      // rewind 5 positions and take another branch (stale rows beyond the end stay masked)
      pos -= 5
      for (let s = 0; s < 8; s++, pos++) {
        const next = (s * 13 + 1) % model.config.vocabSize
        want = referenceForward(model, state, next, pos).slice()
        check(await engine.forward([next], pos), want)
      }
      // a long second prompt: one growth straight to the needed size
      const more = Array.from({ length: 150 }, (_, i) => (i * 17 + 3) % model.config.vocabSize)
      for (let i = 0; i < more.length; i++) want = referenceForward(model, state, more[i], pos + i).slice()
      check(await engine.forward(more, pos), want)
      expect(engine.cacheLength).toBe(pos + more.length)
      expect(worst).toBeLessThan(EXACT_TOLERANCE * scale)
    } finally {
      await engine.dispose()
    }
  })
})
