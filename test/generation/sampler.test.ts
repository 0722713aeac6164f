import { describe, expect, it } from 'vitest'
import { applyRepetitionPenalty, argmax, createRng, createSampler, DEFAULT_SAMPLING, validateSampling } from '../../main/engine/runtime/generation/sampler'

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
