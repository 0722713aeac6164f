/**
 * @file Turning logits into the next token: logits processors as small pure functions over Float32Array,
 * and a sampler that owns its seeded RNG so a seed reproduces a run. Buffers are allocated once per
 * sampler; the per-token path allocates nothing.
 *
 * The processors apply in this order, each to what the one before kept:
 *   repetition penalty (on the logits) → temperature (logits → weights, an unnormalised softmax)
 *   → min-p → top-k → top-p → a seeded draw in proportion to the weights left.
 * Min-p goes first: one cheap pass that shrinks the sort top-k and top-p need. Top-p measures its mass
 * over what min-p and top-k left, so moving min-p after it would change which tokens survive.
 * Temperature 0 is greedy: the argmax, with no draw.
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

/**
 * Repetition penalty, in place on `logits`: each distinct token among the last `window` entries of
 * `history` gets a positive logit divided by `penalty` and a negative one multiplied. Off: penalty 1 or window 0.
 */
export function applyRepetitionPenalty(logits: Float32Array, history: readonly number[], penalty: number, window: number): void {
  if (penalty === 1 || window === 0) return
  const start = Math.max(0, history.length - window)
  for (let i = start; i < history.length; i++) {
    const id = history[i]
    // A token seen twice is penalised once: only its first entry in the window counts.
    if (history.indexOf(id, start) !== i) continue
    const v = logits[id]
    logits[id] = v > 0 ? v / penalty : v * penalty
  }
}

/**
 * Temperature: weights[i] = exp((logits[i] − max) / temperature) for i < weights.length, a softmax left
 * unnormalised so the top token weighs exactly 1. Off: temperature 1. Temperature 0 is greedy: weight 1 for
 * the argmax (first on ties), 0 elsewhere.
 */
export function applyTemperature(logits: Float32Array, temperature: number, weights: Float32Array): void {
  const n = weights.length
  if (temperature === 0) {
    let best = 0
    for (let i = 1; i < n; i++) if (logits[i] > logits[best]) best = i
    weights.fill(0)
    weights[best] = 1
    return
  }
  let max = -Infinity
  for (let i = 0; i < n; i++) if (logits[i] > max) max = logits[i]
  for (let i = 0; i < n; i++) weights[i] = Math.exp((logits[i] - max) / temperature)
}

/**
 * Min-p: writes into `ids` the tokens whose weight is ≥ minP × the top weight, in vocabulary order, and
 * returns how many. The weights must be as applyTemperature leaves them (top = 1), so the bar is just minP.
 * Off: minP 0 (every token is kept).
 */
export function applyMinP(weights: Float32Array, minP: number, ids: Int32Array): number {
  let n = 0
  for (let i = 0; i < weights.length; i++) if (weights[i] >= minP) ids[n++] = i
  return n
}

/** Whether candidate `a` ranks after `b`: lower weight, or the same weight and a higher id. */
function ranksAfter(weights: Float32Array, a: number, b: number): boolean {
  return weights[a] < weights[b] || (weights[a] === weights[b] && a > b)
}

/** Heap step of sortCandidates: sinks ids[i] below every child that ranks after it, within ids[0..n). */
function siftDown(weights: Float32Array, ids: Int32Array, i: number, n: number): void {
  const id = ids[i]
  for (;;) {
    let child = 2 * i + 1
    if (child >= n) break
    if (child + 1 < n && ranksAfter(weights, ids[child + 1], ids[child])) child++
    if (!ranksAfter(weights, ids[child], id)) break
    ids[i] = ids[child]
    i = child
  }
  ids[i] = id
}

/**
 * Sorts the candidates ids[0..n) best first: higher weight first, lower id first on ties. The order is
 * total, so the result is unique. Heapsort, in place: no allocation, O(n log n) even when all weights tie.
 */
export function sortCandidates(weights: Float32Array, ids: Int32Array, n: number): void {
  // The heap's root is the candidate that ranks last; each pass moves it to the end of what is unsorted.
  for (let i = (n >> 1) - 1; i >= 0; i--) siftDown(weights, ids, i, n)
  for (let end = n - 1; end > 0; end--) {
    const last = ids[0]
    ids[0] = ids[end]
    ids[end] = last
    siftDown(weights, ids, 0, end)
  }
}

/**
 * Top-k: how many of `n` candidates, sorted best first, to keep: the first k (on a tie at the cut, the
 * lower id stays). Off: k 0, and k ≥ n changes nothing.
 */
export function applyTopK(n: number, k: number): number {
  return k > 0 && k < n ? k : n
}

/**
 * Top-p (nucleus): how many of the candidates ids[0..n), sorted best first, to keep: the shortest prefix
 * whose weight reaches p × the weight of all n (so the mass is measured over what earlier filters kept).
 * Off: p 1.
 */
export function applyTopP(weights: Float32Array, ids: Int32Array, n: number, p: number): number {
  if (p >= 1) return n
  let total = 0
  for (let i = 0; i < n; i++) total += weights[ids[i]]
  let mass = 0
  for (let i = 0; i < n; i++) {
    mass += weights[ids[i]]
    if (mass >= p * total) return i + 1
  }
  return n
}

/** Draws one of ids[0..n) with probability weight / Σ weights, given `u` uniform in [0, 1). */
export function drawCandidate(weights: Float32Array, ids: Int32Array, n: number, u: number): number {
  let total = 0
  for (let i = 0; i < n; i++) total += weights[ids[i]]
  let r = u * total
  for (let i = 0; i < n; i++) {
    r -= weights[ids[i]]
    if (r < 0) return ids[i]
  }
  // rounding left r at or a hair above 0: the last candidate
  return ids[n - 1]
}

export interface Sampler {
  /** Picks the next token; may modify `logits` in place. */
  sample(logits: Float32Array, history: readonly number[]): number
}

/** A sampler for a vocabulary of `vocabSize` with the given settings; it applies the processors in the file header's order. */
export function createSampler(vocabSize: number, options: SamplingOptions): Sampler {
  const s = validateSampling(options)
  const rng = createRng(s.seed)
  const weights = new Float32Array(vocabSize)
  const ids = new Int32Array(vocabSize)
  return {
    sample(logits, history) {
      applyRepetitionPenalty(logits, history, s.repetitionPenalty, s.repetitionWindow)
      // Greedy needs no weights, sort or draw: temperature 0 would leave only the argmax to pick.
      if (s.temperature === 0) return argmax(logits)
      applyTemperature(logits, s.temperature, weights)
      let n = applyMinP(weights, s.minP, ids)
      sortCandidates(weights, ids, n)
      n = applyTopK(n, s.topK)
      n = applyTopP(weights, ids, n, s.topP)
      return drawCandidate(weights, ids, n, rng())
    }
  }
}
