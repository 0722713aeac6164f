/**
 * A graph larger than protobuf's 2 GiB limit: a model with Gemma 3's 262,144-token vocabulary and tied
 * embeddings, whose output projection alone is 2 GiB of f32 in the graph. It compiles with its weights in
 * the external-data file, ONNX Runtime loads it, and its logits match the reference forward position by
 * position. One small layer keeps the rest cheap; the size is all in the matrix that made graphs fail.
 */
import { statSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { graphDataPath, MAX_PROTO_BYTES } from '../../main/engine/graph'
import { createReferenceState, referenceForward } from '../../main/engine/model/reference'
import { openCachedGraph } from '../../main/engine/runtime/session/open-cached-graph'
import { SingleSessionEngine } from '../../main/engine/runtime/session/single-session-engine'
import { argmax, EXACT_TOLERANCE } from '../graph/compare'
import { randomModel, type RandomModel } from '../graph/random-model'
import type { Tensor } from '../../main/engine/model'
import { tempDir } from '../helpers/paths'

const VOCAB = 262_144
const DIM = 2048

/**
 * Seeded f32 values of magnitude 2^-9..2^-6 with random signs, made from their bit patterns: 537M gaussian
 * samples through the fixtures' generator take minutes, and the values only need to be varied and small. F32
 * rather than F16, so neither the compiler nor the reference spends seconds decoding half floats.
 */
function fastF32(count: number, seed: number): Uint8Array {
  const out = new Uint32Array(count)
  let x = seed >>> 0 || 1
  for (let i = 0; i < count; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = ((x & 1) << 31) | ((118 + ((x >>> 1) & 3)) << 23) | (x >>> 9)
  }
  return new Uint8Array(out.buffer)
}

/** One small layer from the model fixture, with a 262,144 × 2048 embedding tied to the output. */
function bigVocabModel(): RandomModel {
  const small = randomModel({ seed: 2262, dim: DIM, hiddenDim: 128, nLayers: 1, nHeads: 16, nKvHeads: 4, vocabSize: 16, contextLength: 64, tiedEmbeddings: true, encoding: 'f16' })
  const embedding: Tensor = { name: 'token_embd.weight', shape: [VOCAB, DIM], data: { kind: 'dense', dtype: 'f32', bytes: fastF32(VOCAB * DIM, 2262) } }
  return { config: { ...small.config, vocabSize: VOCAB }, weights: { ...small.weights, tokenEmbedding: embedding, output: embedding } }
}

describe('a graph over 2 GiB', () => {
  it('loads from external data and matches the reference', async () => {
    const tmp = tempDir('tandem-large-graph-')
    const model = bigVocabModel()
    const contextLength = 16
    let engine: SingleSessionEngine | null = null
    try {
      const { session, info } = await openCachedGraph(model, { cacheDir: tmp.dir, graph: { ropeTableLength: contextLength } })
      engine = new SingleSessionEngine(model, session, { contextLength, prefillChunkTokens: 4 })
      expect(statSync(graphDataPath(info.graphPath)).size).toBeGreaterThan(MAX_PROTO_BYTES)
      const state = createReferenceState(model.config, contextLength)
      const prompt = [3, 141_592, 262_143]
      let want = new Float32Array(0)
      for (let p = 0; p < prompt.length; p++) want = referenceForward(model, state, prompt[p], p).slice()
      const next = argmax(want)
      const checks = [
        { got: await engine.forward(prompt, 0), want },
        { got: await engine.forward([next], prompt.length), want: referenceForward(model, state, next, prompt.length).slice() }
      ]
      for (const { got, want: w } of checks) {
        let worst = 0
        let scale = 0
        for (let i = 0; i < w.length; i++) {
          worst = Math.max(worst, Math.abs(got[i] - w[i]))
          scale = Math.max(scale, Math.abs(w[i]))
        }
        expect(argmax(got)).toBe(argmax(w))
        expect(worst).toBeLessThan(EXACT_TOLERANCE * scale)
      }
    } finally {
      await engine?.dispose()
      tmp.dispose()
    }
  }, 600_000)
})
