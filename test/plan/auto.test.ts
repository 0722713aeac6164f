/**
 * @file planAuto on synthetic profiles: the solver's placement and explanation, with predicted rates that
 * follow from the predicted times (a chunk per prefill run, one token per decode step). The real-device
 * case is in test/runtime/profiler.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { DEFAULT_PREFILL_CHUNK_TOKENS, parsePlacement, planAuto, predictPlacement, ProfileError, solvePlacement } from '../../main/engine/plan'
import { syntheticProfile, testConfig, thisMachine } from './fixtures'

const config = testConfig()
const devices = thisMachine()
const profile = syntheticProfile(config, {
  cpu: { rest: { fixedMs: 0.01, perTokenMs: 0.001 }, runOverheadMs: 0.05 },
  'cpu-2': { rest: { fixedMs: 0.02, perTokenMs: 0.002 }, runOverheadMs: 0.05 },
  'webgpu-0': { rest: { fixedMs: 0.1, perTokenMs: 0.0005 }, runOverheadMs: 0.5 }
})

describe('planAuto', () => {
  it("returns the solver's placement and explanation with rates from its predicted times", () => {
    const plan = planAuto(config, devices, profile)
    const solution = solvePlacement(config, devices, profile)
    expect(plan.placement).toEqual(solution.placement)
    expect(plan.explanation).toBe(solution.explanation)
    expect(plan.predictedMs).toEqual(solution.predictedMs)
    expect(plan.predictedMs).toEqual(predictPlacement(plan.placement, { config, profile, devices }))
    const chunk = plan.placement.prefillChunkTokens
    expect(chunk).toBe(DEFAULT_PREFILL_CHUNK_TOKENS)
    expect(plan.predictedTokensPerSec.prefill).toBeCloseTo((chunk * 1000) / plan.predictedMs.prefill, 6)
    expect(plan.predictedTokensPerSec.decode).toBeCloseTo(1000 / plan.predictedMs.decode, 6)
    expect(parsePlacement(JSON.parse(JSON.stringify(plan.placement)), config, devices)).toEqual(plan.placement)
  })

  it('passes the solver options through: a shorter chunk changes the prefill rate it is computed from', () => {
    const plan = planAuto(config, devices, profile, { prefillChunkTokens: 16, name: 'Auto (16)' })
    expect(plan.placement.name).toBe('Auto (16)')
    expect(plan.placement.prefillChunkTokens).toBe(16)
    expect(plan.explanation).toContain('per 16-token chunk')
    expect(plan.predictedTokensPerSec.prefill).toBeCloseTo((16 * 1000) / plan.predictedMs.prefill, 6)
    // fixed costs weigh more in a short chunk, so it prefills fewer tokens per second than 256-token chunks
    expect(plan.predictedTokensPerSec.prefill).toBeLessThan(planAuto(config, devices, profile).predictedTokensPerSec.prefill)
  })

  it('keeps rates finite (JSON-safe) for a profile that predicts zero time', () => {
    const free = syntheticProfile(config, { cpu: {} })
    const plan = planAuto(config, devices, free)
    expect(plan.predictedMs).toEqual({ prefill: 0, decode: 0 })
    expect(Number.isFinite(plan.predictedTokensPerSec.prefill)).toBe(true)
    expect(Number.isFinite(plan.predictedTokensPerSec.decode)).toBe(true)
  })

  it('refuses a profile measured for another model shape', () => {
    expect(() => planAuto(testConfig({ nLayers: 6 }), devices, profile)).toThrow(ProfileError)
  })
})
