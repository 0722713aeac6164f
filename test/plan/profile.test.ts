/**
 * @file Profiles: plain JSON that survives a round trip through storage, a strict reader for cached rows,
 * interpolation between sampled sequence lengths, and per-pair hand-off costs.
 */
import { describe, expect, it } from 'vitest'
import { groupMs, interpolateMs, linkCost, modelShapeKey, parseProfile, ProfileError } from '../../main/engine/plan'
import { syntheticProfile, testConfig } from './fixtures'

const config = testConfig()

describe('profiles', () => {
  it('round-trip through JSON and the reader unchanged', () => {
    const profile = syntheticProfile(config, { cpu: { rest: { fixedMs: 0.1, perTokenMs: 0.01 }, runOverheadMs: 0.05 } }, [{ from: 'cpu', to: 'webgpu-0', fixedMs: 0.4, msPerMiB: 2 }])
    expect(parseProfile(JSON.parse(JSON.stringify(profile)))).toEqual(profile)
    expect(profile.modelShape).toBe(modelShapeKey(config))
    expect(modelShapeKey(config)).toBe('llama dim=64 hidden=172 layers=5 heads=8/4x8 vocab=512')
  })

  it('reject malformed rows with the field and the problem', () => {
    const good = (): Record<string, unknown> => JSON.parse(JSON.stringify(syntheticProfile(config, { cpu: {} })))
    const bad = (patch: (p: Record<string, unknown>) => void): unknown => {
      const p = good()
      patch(p)
      return p
    }
    expect(() => parseProfile(bad((p) => (p.version = 3)))).toThrow(/device profile version: 3 is not supported/)
    expect(() => parseProfile(bad((p) => (p.defaultLink = { fixedMs: -1, msPerMiB: 0 })))).toThrow(/defaultLink\.fixedMs: -1 is out of range/)
    const samples = (p: Record<string, unknown>): Array<Record<string, unknown>> => {
      const devices = p.devices
      if (!Array.isArray(devices)) throw new Error('devices')
      return devices[0].groups[0].samples
    }
    expect(() => parseProfile(bad((p) => (samples(p)[1].tokens = 1)))).toThrow(ProfileError)
    expect(() => parseProfile(bad((p) => (samples(p)[1].tokens = 1)))).toThrow(/devices\[0\]\.groups\[0\]\.samples\[1\]\.tokens: 1 must be larger than the previous sample's 1/)
    expect(() => parseProfile(bad((p) => (samples(p)[0].ms = 'fast')))).toThrow(/samples\[0\]\.ms: expected a finite number, got "fast"/)
    expect(() => parseProfile(bad((p) => (samples(p).length = 0)))).toThrow(/samples: needs at least one sample/)
    expect(() => parseProfile(bad((p) => (p.devices = [...(Array.isArray(p.devices) ? p.devices : []), ...(Array.isArray(p.devices) ? p.devices : [])])))).toThrow(/devices\[1\]\.device: "cpu" is listed twice/)
    expect(() => parseProfile(bad((p) => (p.devices = Array.from({ length: 33 }, () => ({ device: 'x', runOverheadMs: 0, groups: [] })))))).toThrow(/devices: 33 entries is more than the limit of 32/)
  })

  it('interpolate linearly between samples, extend the last slope above, and hold the first below', () => {
    const samples = [
      { tokens: 16, ms: 2 },
      { tokens: 64, ms: 5 },
      { tokens: 256, ms: 17 }
    ]
    expect(interpolateMs(samples, 16)).toBe(2)
    expect(interpolateMs(samples, 40)).toBeCloseTo(3.5, 12)
    expect(interpolateMs(samples, 160)).toBeCloseTo(11, 12)
    expect(interpolateMs(samples, 512)).toBeCloseTo(33, 12)
    expect(interpolateMs(samples, 1)).toBe(2)
    expect(interpolateMs([{ tokens: 8, ms: 3 }], 100)).toBe(3)
  })

  it('look lm-head up at one row, and unknown devices or groups up as missing', () => {
    const profile = syntheticProfile(config, { cpu: { rest: { fixedMs: 1, perTokenMs: 0.5 } } })
    expect(groupMs(profile, 'cpu', 'ffn', 64)).toBeCloseTo(33, 12)
    expect(groupMs(profile, 'cpu', 'lm-head', 64)).toBeCloseTo(1.5, 12)
    expect(groupMs(profile, 'npu-0', 'ffn', 64)).toBeNull()
  })

  it('price a hand-off by the measured pair in either direction, else the default', () => {
    const profile = syntheticProfile(config, { cpu: {} }, [{ from: 'cpu', to: 'webgpu-0', fixedMs: 0.4, msPerMiB: 2 }], { fixedMs: 1, msPerMiB: 9 })
    expect(linkCost(profile, 'webgpu-0', 'cpu')).toMatchObject({ fixedMs: 0.4, msPerMiB: 2 })
    expect(linkCost(profile, 'cpu', 'cpu-2')).toEqual({ fixedMs: 1, msPerMiB: 9 })
  })
})
