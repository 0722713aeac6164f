/**
 * @file Runs a compiled graph (in-process session + runtime KV cache) side by side with the reference
 * forward: one prefill of the prompt, then greedy decode steps, comparing the logits at every step.
 */
import { createSession } from '../../main/engine/devices'
import { compileModel, int8ActivationBlock, int8RoundingOf, type GraphOptions } from '../../main/engine/graph'
import { createReferenceState, referenceForward } from '../../main/engine/model/reference'
import { SingleSessionEngine } from '../../main/engine/runtime/session/single-session-engine'
import type { RandomModel } from './random-model'

/**
 * Largest |graph − reference| / max|reference logit| accepted when graph and reference compute alike
 * (float32 everywhere, or int8 activations emulated by the reference): summation order only.
 */
export const EXACT_TOLERANCE = 1e-3
/**
 * The same bound when matmuls round their inputs to int8. The reference emulates that rounding exactly
 * (int8-linear.test.ts shows ~1e-7 on identical inputs), but graph and reference inputs differ by
 * float rounding (~1e-7), and an input that sits within that of a half-way point rounds to a neighbouring
 * int8 code on one side: one code = max|x|/127 of its block, enough to move these small test models'
 * logits by up to ~0.8% of their scale (measured over seeds), and the change persists in the KV cache.
 * Bugs (layouts, scales, zero points) move logits by O(1).
 */
export const INT8_FLIP_TOLERANCE = 1e-2

/** The tolerance for a comparison (see EXACT_TOLERANCE, INT8_FLIP_TOLERANCE). */
export function toleranceFor(r: Comparison): number {
  return r.int8Matmuls > 0 ? INT8_FLIP_TOLERANCE : EXACT_TOLERANCE
}

/** Worst differences seen over all compared steps. */
export interface Comparison {
  /** weights whose matmuls round their input to int8 (0: float32 arithmetic throughout) */
  readonly int8Matmuls: number
  /** max |graph − reference| over all compared logits */
  readonly maxAbsDiff: number
  /** max |reference logit| (the scale the diff is judged against) */
  readonly logitScale: number
  /** argmax agreed at every step */
  readonly top1Equal: boolean
  readonly steps: number
  /** max |graph − reference| of each step (prefill first) */
  readonly stepDiffs: readonly number[]
}

/** max |a[i] − b[i]| over a's length. */
export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  let m = 0
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]))
  return m
}

export function argmax(x: Float32Array): number {
  let best = 0
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i
  return best
}

/** How the graph is compiled and what the reference emulates. */
export interface CompareOptions {
  readonly prefillChunk?: number
  /** graph option; default true, as in production */
  readonly int8Activations?: boolean
  /** the reference rounds matmul inputs to int8 exactly where the graph does (default: when the graph does) */
  readonly emulateInt8?: boolean
}

/** Prefills `prompt` (in chunks of `prefillChunk`), then decodes `decodeSteps` greedy tokens. */
export async function compareWithReference(
  model: RandomModel,
  prompt: readonly number[],
  decodeSteps: number,
  options: CompareOptions = {}
): Promise<Comparison> {
  const contextLength = Math.min(model.config.contextLength, prompt.length + decodeSteps + 1)
  const graphOptions: GraphOptions = { ropeTableLength: contextLength, int8Activations: options.int8Activations ?? true }
  const bytes = compileModel(model, graphOptions)
  const session = await createSession(bytes, { ep: 'cpu', intraOpThreads: 1, interOpThreads: 1 })
  const engine = new SingleSessionEngine(model, session, { contextLength, prefillChunkTokens: options.prefillChunk ?? 128 })
  const emulate = options.emulateInt8 ?? graphOptions.int8Activations
  const state = createReferenceState(model.config, contextLength, emulate ? { int8Activations: (t) => int8RoundingOf(t, graphOptions) } : {})
  const w = model.weights
  const matrices = [w.output, ...w.layers.flatMap((l) => [l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown])]
  const int8Matmuls = matrices.filter((t) => int8ActivationBlock(t, graphOptions) !== null).length
  let maxAbsDiff = 0
  let logitScale = 0
  let top1Equal = true
  let steps = 0
  const stepDiffs: number[] = []
  const check = (got: Float32Array, want: Float32Array): void => {
    let d = 0
    for (let i = 0; i < want.length; i++) {
      d = Math.max(d, Math.abs(got[i] - want[i]))
      logitScale = Math.max(logitScale, Math.abs(want[i]))
    }
    stepDiffs.push(d)
    maxAbsDiff = Math.max(maxAbsDiff, d)
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
  return { int8Matmuls, maxAbsDiff, logitScale, top1Equal, steps, stepDiffs }
}
