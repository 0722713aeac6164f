/**
 * @file Runs a compiled graph (in-process session + runtime KV cache) side by side with the reference
 * forward: one prefill of the prompt, then greedy decode steps, comparing the logits at every step.
 */
import { createSession } from '../../main/engine/devices'
import { compileModel } from '../../main/engine/graph'
import { createReferenceState, referenceForward } from '../../main/engine/model/reference'
import { ModelEngine } from '../../main/engine/runtime/model-engine'
import type { RandomModel } from './random-model'

/** Worst differences seen over all compared steps. */
export interface Comparison {
  /** max |graph − reference| over all compared logits */
  readonly maxAbsDiff: number
  /** max |reference logit| (the scale the diff is judged against) */
  readonly logitScale: number
  /** argmax agreed at every step */
  readonly top1Equal: boolean
  readonly steps: number
}

export function argmax(x: Float32Array): number {
  let best = 0
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i
  return best
}

/** Prefills `prompt` (in chunks of `prefillChunk`), then decodes `decodeSteps` greedy tokens. */
export async function compareWithReference(
  model: RandomModel,
  prompt: readonly number[],
  decodeSteps: number,
  prefillChunk = 128
): Promise<Comparison> {
  const contextLength = Math.min(model.config.contextLength, prompt.length + decodeSteps + 1)
  const bytes = compileModel(model, { ropeTableLength: contextLength })
  const session = await createSession(bytes, { device: 'cpu', intraOpThreads: 1, interOpThreads: 1 })
  const engine = new ModelEngine(model, session, { contextLength, prefillChunk })
  const state = createReferenceState(model.config, contextLength)
  let maxAbsDiff = 0
  let logitScale = 0
  let top1Equal = true
  let steps = 0
  const check = (got: Float32Array, want: Float32Array): void => {
    for (let i = 0; i < want.length; i++) {
      maxAbsDiff = Math.max(maxAbsDiff, Math.abs(got[i] - want[i]))
      logitScale = Math.max(logitScale, Math.abs(want[i]))
    }
    if (argmax(got) !== argmax(want)) top1Equal = false
    steps++
  }
  try {
    let want = new Float32Array(0)
    for (let p = 0; p < prompt.length; p++) want = referenceForward(model, state, prompt[p], p).slice()
    let got = await engine.forward(prompt, 0)
    check(got, want)
    for (let s = 0; s < decodeSteps; s++) {
      const next = argmax(want)
      const pos = prompt.length + s
      want = referenceForward(model, state, next, pos).slice()
      got = await engine.forward([next], pos)
      check(got, want)
    }
  } finally {
    await engine.dispose()
  }
  return { maxAbsDiff, logitScale, top1Equal, steps }
}
