import { describe, expect, it } from 'vitest'
import {
  applyMinP,
  applyRepetitionPenalty,
  applyTemperature,
  applyTopK,
  applyTopP,
  argmax,
  createRng,
  createSampler,
  DEFAULT_SAMPLING,
  drawCandidate,
  sortCandidates,
  validateSampling,
  type SamplingOptions
} from '../../main/engine/runtime/generation/sampler'
import { Rng } from '../fixtures/rng'

const logitsOf = (xs: number[]): Float32Array => Float32Array.from(xs)

describe('sampler', () => {
  it('temperature 0 is argmax, whatever the other settings', () => {
    const s = createSampler(5, { ...DEFAULT_SAMPLING, temperature: 0, topK: 3, topP: 0.5 })
    expect(s.sample(logitsOf([0.1, 3, 2.9, -1, 0]), [])).toBe(1)
  })

  it('the same seed reproduces the same tokens; another seed differs', () => {
    const run = (seed: number): number[] => {
      const s = createSampler(50, { ...DEFAULT_SAMPLING, temperature: 1.5, topK: 0, topP: 1, minP: 0, seed })
      const out: number[] = []
      for (let i = 0; i < 200; i++) out.push(s.sample(new Float32Array(50).fill(0), []))
      return out
    }
    expect(run(7)).toEqual(run(7))
    expect(run(7)).not.toEqual(run(8))
  })

  it('follows the softmax distribution at temperature 1', () => {
    const logits = [Math.log(0.5), Math.log(0.3), Math.log(0.2)]
    const s = createSampler(3, { ...DEFAULT_SAMPLING, temperature: 1, topK: 0, topP: 1, minP: 0, seed: 3 })
    const counts = [0, 0, 0]
    const n = 20000
    for (let i = 0; i < n; i++) counts[s.sample(logitsOf(logits), [])]++
    expect(counts[0] / n).toBeCloseTo(0.5, 1)
    expect(counts[1] / n).toBeCloseTo(0.3, 1)
    expect(counts[2] / n).toBeCloseTo(0.2, 1)
  })

  it('top-k, top-p and min-p cut the tail', () => {
    const logits = [Math.log(0.4), Math.log(0.3), Math.log(0.2), Math.log(0.1)]
    const seen = (opts: Partial<typeof DEFAULT_SAMPLING>): Set<number> => {
      const s = createSampler(4, { ...DEFAULT_SAMPLING, temperature: 1, topK: 0, topP: 1, minP: 0, seed: 1, ...opts })
      const ids = new Set<number>()
      for (let i = 0; i < 3000; i++) ids.add(s.sample(logitsOf(logits), []))
      return ids
    }
    expect(seen({})).toEqual(new Set([0, 1, 2, 3]))
    expect(seen({ topK: 2 })).toEqual(new Set([0, 1]))
    expect(seen({ topP: 0.65 })).toEqual(new Set([0, 1]))
    expect(seen({ minP: 0.4 })).toEqual(new Set([0, 1, 2])) // 0.2 / 0.4 = 0.5 ≥ 0.4 kept; 0.1 / 0.4 < 0.4 dropped
  })

  it('repetition penalty lowers seen tokens once, positive and negative alike', () => {
    const l = logitsOf([2, -2, 1])
    applyRepetitionPenalty(l, [0, 1, 0, 1], 2, 64)
    expect(Array.from(l)).toEqual([1, -4, 1])
    const w = logitsOf([2, -2, 1])
    applyRepetitionPenalty(w, [0, 1, 2], 2, 1) // window of 1 sees only token 2
    expect(Array.from(w)).toEqual([2, -2, 0.5])
  })

  it('rejects out-of-range settings with the field name', () => {
    expect(() => validateSampling({ ...DEFAULT_SAMPLING, topP: 0 })).toThrow(/topP/)
    expect(() => validateSampling({ ...DEFAULT_SAMPLING, temperature: -1 })).toThrow(/temperature/)
    expect(() => validateSampling({ ...DEFAULT_SAMPLING, topK: 1.5 })).toThrow(/topK/)
  })

  it('rng is uniform-ish in [0, 1) and argmax takes the first maximum', () => {
    const r = createRng(42)
    let sum = 0
    let lo = 1
    let hi = 0
    for (let i = 0; i < 10000; i++) {
      const x = r()
      lo = Math.min(lo, x)
      hi = Math.max(hi, x)
      sum += x
    }
    expect(lo).toBeGreaterThanOrEqual(0)
    expect(hi).toBeLessThan(1)
    expect(sum / 10000).toBeCloseTo(0.5, 1)
    expect(argmax(logitsOf([1, 5, 5, 2]))).toBe(1)
  })
})

/** The candidates ids[0..n) as a plain array. */
const kept = (ids: Int32Array, n: number): number[] => Array.from(ids.subarray(0, n))

/** The probability each kept candidate is drawn with: its weight over the kept weights' sum. */
function probabilities(weights: Float32Array, ids: Int32Array, n: number): number[] {
  let total = 0
  for (let i = 0; i < n; i++) total += weights[ids[i]]
  return kept(ids, n).map((id) => weights[id] / total)
}

/** Every token of a vocabulary of `n`, in vocabulary order, as min-p 0 leaves them. */
const allIds = (n: number): Int32Array => Int32Array.from({ length: n }, (_, i) => i)

describe('logits processors', () => {
  it('temperature: exp((logit − max) / T), top token exactly 1; T 1 is the plain softmax', () => {
    const w = new Float32Array(3)
    applyTemperature(logitsOf([1, 2, 3]), 1, w)
    expect(Array.from(w)).toEqual([Math.fround(Math.exp(-2)), Math.fround(Math.exp(-1)), 1])
    applyTemperature(logitsOf([1, 2, 3]), 2, w) // flatter: halves every distance to the top
    expect(Array.from(w)).toEqual([Math.fround(Math.exp(-1)), Math.fround(Math.exp(-0.5)), 1])
    applyTemperature(logitsOf([-7, -7, -7]), 0.8, w) // all-equal logits: uniform
    expect(Array.from(w)).toEqual([1, 1, 1])
  })

  it('temperature → 0 is greedy: 0 is one-hot on the first argmax; a tiny T is one-hot up to ties', () => {
    const w = new Float32Array(4)
    applyTemperature(logitsOf([0.1, 3, 3, -1]), 0, w)
    expect(Array.from(w)).toEqual([0, 1, 0, 0])
    applyTemperature(logitsOf([0.1, 3, 2.5, -1]), 1e-3, w)
    expect(Array.from(w)).toEqual([0, 1, 0, 0]) // exp(−500) underflows to 0 in float32
    // the sampler takes the argmax at temperature 0, whatever the filters and the seed
    for (const seed of [0, 1, 2]) {
      const s = createSampler(4, { ...DEFAULT_SAMPLING, temperature: 0, topK: 0, topP: 1, minP: 0, seed })
      expect(s.sample(logitsOf([0.1, 3, 3, -1]), [])).toBe(1)
    }
  })

  it('min-p: keeps weight ≥ minP × top (the bar itself included), in vocabulary order; minP 0 keeps all', () => {
    // probabilities [0.1, 0.4, 0.2, 0.3] → weights relative to the top
    const w = logitsOf([0.25, 1, 0.5, 0.75])
    const ids = new Int32Array(4)
    let n = applyMinP(w, 0.5, ids)
    expect(kept(ids, n)).toEqual([1, 2, 3]) // 0.5 sits on the bar and stays; 0.25 goes
    expect(probabilities(w, ids, n)).toEqual([1 / 2.25, 0.5 / 2.25, 0.75 / 2.25])
    n = applyMinP(w, 0.6, ids)
    expect(kept(ids, n)).toEqual([1, 3])
    n = applyMinP(w, 0, ids)
    expect(kept(ids, n)).toEqual([0, 1, 2, 3])
    n = applyMinP(logitsOf([1, 1, 1]), 0.99, ids) // all equal: all at the top
    expect(kept(ids, n)).toEqual([0, 1, 2])
  })

  it('sort: higher weight first, lower id first on ties; all-equal weights stay in id order', () => {
    const ids = allIds(5)
    sortCandidates(logitsOf([0.5, 1, 0.5, 0.25, 1]), ids, 5)
    expect(Array.from(ids)).toEqual([1, 4, 0, 2, 3])
    const same = Int32Array.from([3, 0, 2, 1])
    sortCandidates(logitsOf([1, 1, 1, 1]), same, 4)
    expect(Array.from(same)).toEqual([0, 1, 2, 3])
    // only ids[0..n) move
    const part = Int32Array.from([2, 0, 1, 3])
    sortCandidates(logitsOf([0.1, 0.2, 0.3, 1]), part, 3)
    expect(Array.from(part)).toEqual([2, 1, 0, 3])
  })

  it('sort agrees with Array.prototype.sort on random weights with many ties', () => {
    const r = new Rng(11)
    for (let trial = 0; trial < 50; trial++) {
      const n = 1 + r.int(60)
      const w = Float32Array.from({ length: n }, () => r.int(8) / 8)
      const ids = allIds(n)
      sortCandidates(w, ids, n)
      expect(Array.from(ids)).toEqual(Array.from(allIds(n)).sort((a, b) => w[b] - w[a] || a - b))
    }
  })

  it('top-k: the first k of the sorted candidates; a tie at the cut keeps the lower id; k 0 or k ≥ n keeps all', () => {
    const w = logitsOf([0.5, 1, 0.5, 0.25])
    const ids = allIds(4)
    sortCandidates(w, ids, 4) // [1, 0, 2, 3]
    const n = applyTopK(4, 2)
    expect(kept(ids, n)).toEqual([1, 0]) // 0 and 2 tie at 0.5: 0 stays
    expect(probabilities(w, ids, n)).toEqual([2 / 3, 1 / 3])
    expect(applyTopK(4, 0)).toBe(4)
    expect(applyTopK(4, 4)).toBe(4)
    expect(applyTopK(4, 50)).toBe(4)
    expect(applyTopK(4, 1)).toBe(1)
  })

  it('top-p: the shortest sorted prefix whose weight reaches p × the total (reaching counts); p 1 keeps all', () => {
    const w = logitsOf([0.25, 0.5, 1, 0.25]) // total 2
    const ids = allIds(4)
    sortCandidates(w, ids, 4) // [2, 1, 0, 3]
    expect(applyTopP(w, ids, 4, 0.5)).toBe(1) // 1 reaches 0.5 × 2 exactly
    expect(applyTopP(w, ids, 4, 0.6)).toBe(2)
    const n = applyTopP(w, ids, 4, 0.75) // 1 + 0.5 reaches 1.5 exactly
    expect(kept(ids, n)).toEqual([2, 1])
    expect(probabilities(w, ids, n)).toEqual([2 / 3, 1 / 3])
    expect(applyTopP(w, ids, 4, 0.875)).toBe(3)
    expect(applyTopP(w, ids, 4, 0.9)).toBe(4)
    expect(applyTopP(w, ids, 4, 1)).toBe(4)
    // measured over what earlier filters kept: of the top 2 only, 0.6 × 1.5 = 0.9 is reached by the first
    expect(applyTopP(w, ids, 2, 0.6)).toBe(1)
    // all equal: half the mass is half the tokens
    expect(applyTopP(logitsOf([1, 1, 1, 1]), allIds(4), 4, 0.5)).toBe(2)
  })

  it('draw: u in [0, 1) picks each candidate over a slice of width weight / total, in order', () => {
    const w = logitsOf([0.25, 0.5, 1, 0.25])
    const ids = Int32Array.from([2, 1, 0, 3])
    // slices: id 2 [0, 0.5), id 1 [0.5, 0.75), id 0 [0.75, 0.875), id 3 [0.875, 1)
    expect([0, 0.49, 0.5, 0.74, 0.75, 0.86, 0.88, 0.999999].map((u) => drawCandidate(w, ids, 4, u))).toEqual([2, 2, 1, 1, 0, 0, 3, 3])
    // over a prefix, the slices are renormalised: id 2 [0, 2/3), id 1 [2/3, 1)
    expect([0.66, 0.67].map((u) => drawCandidate(w, ids, 2, u))).toEqual([2, 1])
    expect(drawCandidate(w, ids, 1, 0.999999)).toBe(2)
  })

  it('in order on one vector: temperature → min-p → top-k → top-p', () => {
    const logits = logitsOf([Math.log(0.1), Math.log(0.4), Math.log(0.2), Math.log(0.3)])
    const w = new Float32Array(4)
    const ids = new Int32Array(4)
    applyTemperature(logits, 1, w) // ≈ [0.25, 1, 0.5, 0.75]
    let n = applyMinP(w, 0.3, ids) // drops id 0
    expect(kept(ids, n)).toEqual([1, 2, 3])
    sortCandidates(w, ids, n)
    expect(kept(ids, n)).toEqual([1, 3, 2])
    n = applyTopK(n, 0)
    n = applyTopP(w, ids, n, 0.7) // of 0.4 + 0.3 + 0.2 = 0.9, 0.63 is reached by 0.4 + 0.3
    expect(kept(ids, n)).toEqual([1, 3])
    const p = probabilities(w, ids, n)
    expect(p[0]).toBeCloseTo(4 / 7, 6)
    expect(p[1]).toBeCloseTo(3 / 7, 6)
  })
})

describe('sampler output is pinned', () => {
  // Ids the sampler gave before its processors were split into functions (the order and arithmetic must
  // not change): 16 tokens per run, each drawn from a fresh copy of one seeded logits vector, with the
  // tokens so far as the history. Tokens 186 and 200 tie at the top; 5 and 17 tie too.
  const VOCAB = 256
  const base = new Rng(2024).fillNormal(new Float32Array(VOCAB), 2)
  base[200] = base[argmax(base)]
  base[17] = base[5]
  const run = (options: Partial<SamplingOptions>, seed: number): number[] => {
    const s = createSampler(VOCAB, { ...DEFAULT_SAMPLING, ...options, seed })
    const ids: number[] = []
    for (let i = 0; i < 16; i++) ids.push(s.sample(Float32Array.from(base), ids))
    return ids
  }
  const cases: readonly [string, Partial<SamplingOptions>, Record<number, number[]>][] = [
    [
      'defaults',
      {},
      {
        0: [186, 186, 20, 200, 20, 186, 186, 200, 186, 20, 186, 186, 20, 20, 20, 20],
        1: [200, 20, 20, 200, 200, 186, 186, 200, 186, 200, 200, 186, 186, 186, 186, 200],
        42: [200, 200, 186, 20, 186, 186, 186, 186, 200, 200, 20, 186, 186, 186, 186, 200]
      }
    ],
    [
      'no filters, T 1.3',
      { temperature: 1.3, topK: 0, topP: 1, minP: 0 },
      {
        0: [200, 200, 222, 193, 122, 20, 186, 193, 186, 98, 186, 200, 131, 112, 224, 242],
        1: [176, 113, 51, 54, 49, 186, 200, 20, 200, 193, 20, 200, 200, 20, 200, 193],
        42: [176, 20, 200, 112, 186, 186, 200, 20, 193, 176, 153, 186, 186, 20, 186, 81]
      }
    ],
    [
      'every processor on',
      { temperature: 1, topK: 5, topP: 0.9, minP: 0.02, repetitionPenalty: 1.3, repetitionWindow: 8 },
      {
        0: [186, 200, 186, 20, 20, 186, 193, 200, 186, 81, 186, 186, 176, 186, 186, 193],
        1: [200, 20, 200, 186, 200, 193, 186, 200, 186, 200, 20, 186, 186, 200, 193, 200],
        42: [200, 186, 20, 20, 193, 186, 200, 200, 200, 20, 176, 186, 186, 186, 193, 200]
      }
    ]
  ]
  for (const [name, options, bySeed] of cases) {
    it(name, () => {
      expect(argmax(base)).toBe(186)
      for (const [seed, ids] of Object.entries(bySeed)) expect(run(options, Number(seed))).toEqual(ids)
    })
  }
})
