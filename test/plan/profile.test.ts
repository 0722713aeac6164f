/**
 * @file Profiles: plain JSON that survives a round trip through storage, a strict reader for cached rows,
 * interpolation between sampled sequence lengths, and per-pair hand-off costs.
 */
import { describe, expect, it } from 'vitest'
import { groupMs, interpolateMs, linkCost, modelShapeKey, parseProfile, partMs, ProfileError, type Profile } from '../../main/engine/plan'
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

  it('carry measured partition parts through the reader, and stay valid without them', () => {
    const base = syntheticProfile(config, { cpu: { rest: { fixedMs: 1, perTokenMs: 0.5 } } })
    expect(base.devices[0].partitions).toBeUndefined()
    expect(parseProfile(JSON.parse(JSON.stringify(base)))).toEqual(base)
    const withParts: Profile = { ...base, devices: [{ ...base.devices[0], partitions: [{ group: 'ffn', share: 0.5, samples: [{ tokens: 1, ms: 1 }, { tokens: 64, ms: 20 }] }] }] }
    expect(parseProfile(JSON.parse(JSON.stringify(withParts)))).toEqual(withParts)
  })

  it('reject malformed partition parts with the field and the problem', () => {
    const cpu = syntheticProfile(config, { cpu: {} }).devices[0]
    const withParts = (partitions: unknown, groups: unknown = cpu.groups): unknown => JSON.parse(JSON.stringify({ ...syntheticProfile(config, { cpu: {} }), devices: [{ ...cpu, groups, partitions }] }))
    const part = (patch: Record<string, unknown> = {}): Record<string, unknown> => ({ group: 'ffn', share: 0.5, samples: [{ tokens: 1, ms: 1 }], ...patch })
    expect(() => parseProfile(withParts([part({ group: 'attention' })]))).toThrow(/devices\[0\]\.partitions\[0\]\.group: "attention" is not one of qkv, attn-out, ffn, lm-head/)
    expect(() => parseProfile(withParts([part(), part({ share: 0.25 })]))).toThrow(/devices\[0\]\.partitions\[1\]\.group: ffn is listed twice/)
    expect(() => parseProfile(withParts([part({ share: 0 })]))).toThrow(/partitions\[0\]\.share: 0 must be strictly between 0 and 1/)
    expect(() => parseProfile(withParts([part({ share: 1 })]))).toThrow(/partitions\[0\]\.share: 1 must be strictly between 0 and 1/)
    expect(() => parseProfile(withParts([part({ share: 1.5 })]))).toThrow(/partitions\[0\]\.share: 1\.5 is out of range \[0, 1\]/)
    expect(() => parseProfile(withParts([part({ share: '1/2' })]))).toThrow(/partitions\[0\]\.share: expected a finite number, got "1\/2"/)
    expect(() => parseProfile(withParts([part({ samples: [] })]))).toThrow(/partitions\[0\]\.samples: needs at least one sample/)
    expect(() => parseProfile(withParts([part({ samples: [{ tokens: 16, ms: 1 }, { tokens: 4, ms: 2 }] })]))).toThrow(/partitions\[0\]\.samples\[1\]\.tokens: 4 must be larger than the previous sample's 16/)
    expect(() => parseProfile(withParts([part({ rows: 86 })]))).toThrow(/partitions\[0\]: unknown field "rows"/)
    expect(() => parseProfile(withParts([part()], cpu.groups.filter((g) => g.group !== 'ffn')))).toThrow(/partitions\[0\]\.group: ffn has no group timing on this device to go with it/)
    expect(() => parseProfile(withParts(Array.from({ length: 5 }, (_, i) => part({ group: ['qkv', 'attn-out', 'ffn', 'lm-head', 'qkv'][i] }))))).toThrow(/devices\[0\]\.partitions: 5 entries is more than the limit of 4/)
    expect(() => parseProfile(withParts({ ffn: part() }))).toThrow(/devices\[0\]\.partitions: expected an array, got an object/)
  })

  it('price a part from the measured one: piecewise linear in the share through (0, 0), (s, part), (1, whole); linear without one', () => {
    // ffn: 1 + 0.5 · tokens ms whole; the measured 0.25 part costs 0.5 + 0.25 · tokens (half, not a quarter)
    const base = syntheticProfile(config, { cpu: { rest: { fixedMs: 1, perTokenMs: 0.5 } } })
    const profile: Profile = { ...base, devices: [{ ...base.devices[0], partitions: [{ group: 'ffn', share: 0.25, samples: [{ tokens: 1, ms: 0.75 }, { tokens: 64, ms: 16.5 }] }, { group: 'lm-head', share: 0.5, samples: [{ tokens: 1, ms: 0.3 }] }] }] }
    // at 64 tokens: whole 33, part 16.5 (exact), at 16 tokens interpolated: 0.75 + 15 · 0.25 = 4.5, whole 9
    expect(partMs(profile, 'cpu', 'ffn', 0.25, 64)).toBeCloseTo(16.5, 12)
    expect(partMs(profile, 'cpu', 'ffn', 0.125, 64)).toBeCloseTo(8.25, 12)
    expect(partMs(profile, 'cpu', 'ffn', 0.625, 64)).toBeCloseTo(16.5 + 0.5 * (33 - 16.5), 12)
    expect(partMs(profile, 'cpu', 'ffn', 1, 64)).toBeCloseTo(33, 12)
    expect(partMs(profile, 'cpu', 'ffn', 0.5, 16)).toBeCloseTo(4.5 + ((0.5 - 0.25) / 0.75) * (9 - 4.5), 12)
    // lm-head is looked up at its one row whatever the run length
    expect(partMs(profile, 'cpu', 'lm-head', 0.25, 64)).toBeCloseTo(0.15, 12)
    // no measured part: share · whole; no such device: null
    expect(partMs(profile, 'cpu', 'qkv', 0.25, 64)).toBeCloseTo(0.25 * 33, 12)
    expect(partMs(base, 'cpu', 'ffn', 0.25, 64)).toBeCloseTo(0.25 * 33, 12)
    expect(partMs(profile, 'npu-0', 'ffn', 0.25, 64)).toBeNull()
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
