/**
 * @file Turning logits into the next token: logits processors (repetition penalty, temperature, top-k,
 * top-p, min-p) as small functions over Float32Array, and a sampler that owns its seeded RNG so a seed
 * reproduces a run. Buffers are allocated once per sampler; the per-token path allocates nothing.
 */

/** Sampling settings; temperature 0 means greedy (argmax). */
export interface SamplingOptions {
  readonly temperature: number
  /** keep the k most likely tokens; 0 = off */
  readonly topK: number
  /** keep the smallest set whose probability mass reaches p; 1 = off */
  readonly topP: number
  /** drop tokens below minP × p(most likely); 0 = off */
  readonly minP: number
  /** > 1 discourages tokens already seen (CTRL-style: positive logits divided, negative multiplied); 1 = off */
  readonly repetitionPenalty: number
  /** how many recent tokens the penalty looks at */
  readonly repetitionWindow: number
  readonly seed: number
}

export const DEFAULT_SAMPLING: SamplingOptions = Object.freeze({
  temperature: 0.8,
  topK: 40,
  topP: 0.95,
  minP: 0.05,
  repetitionPenalty: 1,
  repetitionWindow: 64,
  seed: 0
})

/** Checks ranges; throws a RangeError naming the field. */
export function validateSampling(s: SamplingOptions): SamplingOptions {
  const check = (ok: boolean, field: string, rule: string): void => {
    if (!ok) throw new RangeError(`sampling.${field} must be ${rule}`)
  }
  check(Number.isFinite(s.temperature) && s.temperature >= 0 && s.temperature <= 10, 'temperature', 'in [0, 10]')
  check(Number.isInteger(s.topK) && s.topK >= 0, 'topK', 'an integer ≥ 0')
  check(Number.isFinite(s.topP) && s.topP > 0 && s.topP <= 1, 'topP', 'in (0, 1]')
  check(Number.isFinite(s.minP) && s.minP >= 0 && s.minP < 1, 'minP', 'in [0, 1)')
  check(Number.isFinite(s.repetitionPenalty) && s.repetitionPenalty > 0, 'repetitionPenalty', '> 0')
  check(Number.isInteger(s.repetitionWindow) && s.repetitionWindow >= 0, 'repetitionWindow', 'an integer ≥ 0')
  check(Number.isInteger(s.seed), 'seed', 'an integer')
  return s
}

/** xorshift32-based generator; deterministic for a seed, floats in [0, 1). */
export function createRng(seed: number): () => number {
  // splitmix-style scramble so seeds 0, 1, 2 ... start far apart; state must never be 0.
  let state = (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ 0xc2b2ae35) >>> 0 || 0x6d2b79f5
  return () => {
    state ^= state << 13
    state >>>= 0
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    return state / 4294967296
  }
}

/** Index of the largest value (first on ties). */
export function argmax(x: Float32Array): number {
  let best = 0
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i
  return best
}

/** In place: penalise every token in the last `window` entries of `history`. */
export function applyRepetitionPenalty(logits: Float32Array, history: readonly number[], penalty: number, window: number): void {
  if (penalty === 1 || window === 0) return
  const start = Math.max(0, history.length - window)
  for (let i = start; i < history.length; i++) {
    const id = history[i]
    // A token seen twice is penalised once: mark it by checking whether an earlier window entry had it.
    if (history.indexOf(id, start) !== i) continue
    const v = logits[id]
    logits[id] = v > 0 ? v / penalty : v * penalty
  }
}

export interface Sampler {
  /** Picks the next token; may modify `logits` in place. */
  sample(logits: Float32Array, history: readonly number[]): number
}

/** A sampler for a vocabulary of `vocabSize` with the given settings. */
export function createSampler(vocabSize: number, options: SamplingOptions): Sampler {
  const s = validateSampling(options)
  const rng = createRng(s.seed)
  const order = new Int32Array(vocabSize)
  const probs = new Float32Array(vocabSize)
  return {
    sample(logits, history) {
      applyRepetitionPenalty(logits, history, s.repetitionPenalty, s.repetitionWindow)
      if (s.temperature === 0) return argmax(logits)
      // softmax with temperature into probs
      let max = -Infinity
      for (let i = 0; i < vocabSize; i++) if (logits[i] > max) max = logits[i]
      for (let i = 0; i < vocabSize; i++) probs[i] = Math.exp((logits[i] - max) / s.temperature)
      // candidates: min-p first (cheap, shrinks the sort). probs are unnormalised with the top token at
      // exp(0) = 1, so "minP × p(top)" is just minP. Then top-k, then top-p over what is left.
      const minKeep = s.minP
      let n = 0
      for (let i = 0; i < vocabSize; i++) if (probs[i] >= minKeep) order[n++] = i
      const cand = order.subarray(0, n)
      cand.sort((a, b) => probs[b] - probs[a] || a - b)
      if (s.topK > 0 && s.topK < n) n = s.topK
      if (s.topP < 1) {
        let mass = 0
        let total = 0
        for (let i = 0; i < n; i++) total += probs[cand[i]]
        for (let i = 0; i < n; i++) {
          mass += probs[cand[i]]
          if (mass >= s.topP * total) {
            n = i + 1
            break
          }
        }
      }
      let total = 0
      for (let i = 0; i < n; i++) total += probs[cand[i]]
      let r = rng() * total
      for (let i = 0; i < n; i++) {
        r -= probs[cand[i]]
        if (r < 0) return cand[i]
      }
      return cand[n - 1]
    }
  }
}
