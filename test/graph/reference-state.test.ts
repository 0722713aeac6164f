/**
 * Each reference state keeps its own caches: two states over the same weights compute what each would
 * alone, whatever ran first. The int8 plan of a weight depends on the state's `int8Activations` callback,
 * so a plan cached for one state must never serve another.
 */
import { describe, expect, it } from 'vitest'
import { int8RoundingOf, type GraphOptions } from '../../main/engine/graph'
import { createReferenceState, loadModel, referenceForward, type ModelConfig, type ModelWeights } from '../../main/engine/model'
import type { ReferenceOptions } from '../../main/engine/model/reference'
import { sharedModel } from '../helpers/paths'

type Model = { readonly config: ModelConfig; readonly weights: ModelWeights }

const PROMPT = [1, 403, 407, 261, 378]
const CONTEXT = PROMPT.length

/** A fresh copy of stories260K_q80 (int8 groups, so the graph rounds its matmul inputs to int8): new Tensor objects each time. */
async function freshModel(): Promise<Model> {
  const model = await loadModel(sharedModel('stories260K/stories260K_q80.bin'))
  if (!model.weights) throw new Error('no weights')
  return { config: model.config, weights: model.weights }
}

const graph: GraphOptions = { ropeTableLength: CONTEXT }
/** The ways a state can compute: as the int8-activation graph does; as a graph without int8 activations says (null plans); no callback. */
const KINDS: Record<string, ReferenceOptions> = {
  emulating: { int8Activations: (t) => int8RoundingOf(t, graph) },
  'float plans': { int8Activations: (t) => int8RoundingOf(t, { ...graph, int8Activations: false }) },
  plain: {}
}

/** Logits at every prompt position of one state of `kind` alone, on its own copy of the weights. */
async function alone(kind: string): Promise<Float32Array[]> {
  const model = await freshModel()
  const state = createReferenceState(model.config, CONTEXT, KINDS[kind])
  return PROMPT.map((token, pos) => referenceForward(model, state, token, pos).slice())
}

/** Largest |got − want| over every position's logits (0 when identical). */
function maxDiff(got: readonly Float32Array[], want: readonly Float32Array[]): number {
  let worst = 0
  got.forEach((g, p) => g.forEach((v, i) => (worst = Math.max(worst, Math.abs(v - want[p][i])))))
  return worst
}

describe('reference state caches', () => {
  it('two states over the same weights, with different int8 callbacks, each match a state of their own kind alone', async () => {
    const want: Record<string, Float32Array[]> = {}
    for (const kind of Object.keys(KINDS)) want[kind] = await alone(kind)
    // the kinds differ where it matters: emulation changes the logits; null plans are float32 arithmetic
    expect(maxDiff(want.emulating, want.plain)).toBeGreaterThan(1e-3)
    expect(maxDiff(want['float plans'], want.plain)).toBe(0)

    const wrong: string[] = []
    for (const first of Object.keys(KINDS)) {
      for (const second of Object.keys(KINDS)) {
        if (first === second) continue
        const model = await freshModel()
        const a = createReferenceState(model.config, CONTEXT, KINDS[first])
        const b = createReferenceState(model.config, CONTEXT, KINDS[second])
        // all of `first`, then all of `second`, over the same Tensor objects
        const gotA = PROMPT.map((token, pos) => referenceForward(model, a, token, pos).slice())
        const gotB = PROMPT.map((token, pos) => referenceForward(model, b, token, pos).slice())
        const offA = maxDiff(gotA, want[first])
        const offB = maxDiff(gotB, want[second])
        if (offA !== 0) wrong.push(`${first} (run before ${second}) off by ${offA}`)
        if (offB !== 0) wrong.push(`${second} (run after ${first}) off by ${offB}`)
      }
    }
    expect(wrong).toEqual([])
  })

  it("each state asks its own callback once per weight, even when another state already asked for the same weights", async () => {
    const model = await freshModel()
    const matmuls = 1 + 7 * model.config.nLayers // output, and per layer wq wk wv wo wGate wUp wDown
    const asked = [0, 0]
    const states = asked.map((_, i) =>
      createReferenceState(model.config, CONTEXT, {
        int8Activations: (t) => {
          asked[i]++
          return int8RoundingOf(t, graph)
        }
      })
    )
    for (const state of states) for (let pos = 0; pos < 2; pos++) referenceForward(model, state, PROMPT[pos], pos)
    expect(asked).toEqual([matmuls, matmuls])
  })
})
