/**
 * @file The device profiler on this machine's real devices (cpu, cpu-2, WebGPU on lavapipe) with
 * stories260K: the profile parses, every ready device has every op-group kind with positive times that
 * grow with the run length and a measured half row-partition part of every matmul group, the second CPU worker shares the CPU's measurement, the hand-off cost is
 * measured, Auto plans from it; cache keys; the calibration arithmetic; abort ends the workers. One
 * profile run is shared by the tests (it takes seconds, most of it worker start-up).
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { discoverDevices, type DeviceInfo } from '../../main/engine/devices'
import { LAYER_GROUP_KINDS, type CompilableModel, type GroupKind } from '../../main/engine/graph'
import { loadModel } from '../../main/engine/model'
import { modelShapeKey, OP_GROUP_NAMES, parsePlacement, parseProfile, planAuto, type Profile } from '../../main/engine/plan'
import { MATMUL_GROUPS, rowCuts, rowShareOf } from '../../main/engine/plan'
import { calibrationScales, DEFAULT_LINK, deviceGroupTimings, devicePartitionTimings, groupSamples, MIN_CALIBRATION_SCALE, MIN_GROUP_MS, PROFILE_PART_RATIO, profileCacheKeys, profileDevices, type ProfileProgress, type RunSample } from '../../main/engine/runtime'
import { fitLink, LINK_SIZES_BYTES, measureLink } from '../../main/engine/runtime/profile/link'
import { randomModel } from '../graph/random-model'
import { sharedModel } from '../helpers/paths'

async function compilable(path: string): Promise<CompilableModel> {
  const m = await loadModel(sharedModel(path))
  if (!m.weights) throw new Error(`${path}: no weights`)
  return { config: m.config, weights: m.weights }
}

// run lengths 1 and 16 plus a 64-token prefill chunk keep the software GPU's share to a few seconds
const CHUNK = 64
let model: CompilableModel
let devices: DeviceInfo[]
let ready: DeviceInfo[]
let profile: Profile
const progress: ProfileProgress[] = []

beforeAll(async () => {
  ;[model, devices] = await Promise.all([compilable('stories260K/stories260K.gguf'), discoverDevices()])
  ready = devices.filter((d) => d.status === 'ready')
  profile = await profileDevices(model, devices, { tokens: [1, 16], prefillChunkTokens: CHUNK, onProgress: (p) => progress.push(p) })
}, 180_000)

describe('profileDevices on the real devices', () => {
  it('returns a profile parseProfile accepts, for this model shape and exactly the ready devices', () => {
    expect(ready.map((d) => d.id)).toEqual(expect.arrayContaining(['cpu', 'cpu-2']))
    expect(parseProfile(JSON.parse(JSON.stringify(profile)))).toEqual(profile)
    expect(profile.modelShape).toBe(modelShapeKey(model.config))
    expect(profile.devices.map((d) => d.device)).toEqual(ready.map((d) => d.id))
  })

  it('times every op-group kind on every ready device: positive and non-decreasing in the run length', () => {
    expect(progress.filter((p) => p.failure !== null).map((p) => `${p.device} ${p.target}: ${p.failure}`)).toEqual([])
    for (const d of profile.devices) {
      expect(d.runOverheadMs, d.device).toBeGreaterThan(0)
      expect(d.groups.map((g) => g.group), d.device).toEqual(OP_GROUP_NAMES)
      for (const g of d.groups) {
        expect(g.samples.map((s) => s.tokens), `${d.device} ${g.group}`).toEqual(g.group === 'lm-head' ? [1] : [1, 16, CHUNK])
        g.samples.forEach((s, i) => {
          expect(s.ms, `${d.device} ${g.group} @${s.tokens}`).toBeGreaterThanOrEqual(MIN_GROUP_MS)
          if (i > 0) expect(s.ms).toBeGreaterThanOrEqual(g.samples[i - 1].ms)
        })
      }
    }
    // (stories260K's groups take microseconds on the CPU, as little as the noise between runs, so whether 64
    // tokens measure longer than one is left to the larger model below)
  })

  it('longer runs take longer where the work dwarfs the noise: attention and the FFN of a dim-512 model on the CPU, 1 vs 64 tokens', async () => {
    // 64 tokens are many times the arithmetic of one (the FFN: 400 vs 6 MFLOP; attention over 192 cached
    // positions: ~50×) and measured ~11× and ~4× longer on the dev machine; a median of several runs cannot
    // invert that on a machine 10× faster or slower, loaded or not, as it can for stories260K's µs-size groups
    const larger = randomModel({ seed: 11, dim: 512, hiddenDim: 2048, nLayers: 2, nHeads: 8, nKvHeads: 4, vocabSize: 256, contextLength: 512 })
    const cpu = devices.filter((d) => d.id === 'cpu')
    const timed = await profileDevices(larger, cpu, { tokens: [1], prefillChunkTokens: CHUNK, pastTokens: 192, threads: 1, measureLinks: false })
    const groups = timed.devices[0].groups
    console.log(`dim-512 model on the CPU: ${groups.filter((g) => g.group === 'attention' || g.group === 'ffn').map((g) => `${g.group} ${g.samples.map((x) => `${x.ms.toFixed(3)} ms @${x.tokens}`).join(', ')}`).join('; ')}`)
    for (const kind of ['attention', 'ffn']) {
      const s = groups.find((g) => g.group === kind)?.samples ?? []
      expect(s.map((x) => x.tokens), kind).toEqual([1, CHUNK])
      expect(s[1].ms, `${kind}: ${s[0].ms.toFixed(4)} ms at 1 token, ${s[1].ms.toFixed(4)} ms at ${CHUNK}`).toBeGreaterThan(s[0].ms)
    }
  }, 120_000)

  it('times part a of a half row partition of every matmul group on every ready device, at the group\'s run lengths', () => {
    for (const d of profile.devices) {
      expect(d.partitions?.map((p) => p.group), d.device).toEqual([...MATMUL_GROUPS])
      for (const p of d.partitions ?? []) {
        const cuts = rowCuts(p.group, PROFILE_PART_RATIO, model.config)
        if (typeof cuts === 'string') throw new Error(cuts)
        expect(p.share, `${d.device} ${p.group}`).toBe(rowShareOf(cuts))
        const whole = d.groups.find((g) => g.group === p.group)?.samples ?? []
        expect(p.samples.map((s) => s.tokens), `${d.device} ${p.group}`).toEqual(whole.map((s) => s.tokens))
        p.samples.forEach((s, i) => {
          expect(s.ms, `${d.device} part of ${p.group} @${s.tokens}`).toBeGreaterThanOrEqual(MIN_GROUP_MS)
          if (i > 0) expect(s.ms).toBeGreaterThanOrEqual(p.samples[i - 1].ms)
        })
      }
    }
    // each part graph was compiled once per graph target and measured once per measured device, none refused
    const partSteps = progress.filter((p) => typeof p.target === 'string' && p.target.startsWith('part:'))
    expect(new Set(partSteps.map((p) => p.target))).toEqual(new Set(MATMUL_GROUPS.map((g) => `part:${g}`)))
    expect(partSteps.every((p) => p.failure === null)).toBe(true)
  })

  it('measures the second CPU worker once, with the CPU: same EP on the same cores, so the same times', () => {
    const cpu = profile.devices.find((d) => d.device === 'cpu')
    const second = profile.devices.find((d) => d.device === 'cpu-2')
    expect(second).toEqual({ ...cpu, device: 'cpu-2' })
    expect(progress.filter((p) => p.device === 'cpu-2')).toEqual([expect.objectContaining({ stage: 'measure', target: null, failure: null })])
    // the software GPU is measured for itself, including the calibration segment
    expect(progress.filter((p) => p.device === 'webgpu-0' && p.target === 'layer-stack')).toHaveLength(ready.some((d) => d.id === 'webgpu-0') ? 1 : 0)
  })

  it('measures the hand-off on the runtime\'s own command channel: a round trip, and a per-MiB cost of the two arena copies', async () => {
    // How long a round trip takes is this machine's (and its load's) business; what must hold anywhere is
    // checked: a positive, finite wake-up and a finite, non-negative copy rate in the profile...
    expect(profile.links).toEqual([])
    expect(profile.defaultLink.fixedMs).toBeGreaterThan(0)
    expect(Number.isFinite(profile.defaultLink.fixedMs)).toBe(true)
    expect(profile.defaultLink.msPerMiB).toBeGreaterThanOrEqual(0)
    expect(Number.isFinite(profile.defaultLink.msPerMiB)).toBe(true)
    // (a measured figure, not the default used when links are not measured)...
    expect(profile.defaultLink).not.toEqual(DEFAULT_LINK)
    // ...the fit's arithmetic (ms and MiB: fixed = the empty round trip, per MiB = the largest payload's extra time)...
    const MiB = 2 ** 20
    expect(fitLink([{ bytes: 0, roundTripMs: 0.25 }, { bytes: MiB / 4, roundTripMs: 0.5 }, { bytes: 4 * MiB, roundTripMs: 4.25 }])).toEqual({ fixedMs: 0.25, msPerMiB: 1 })
    expect(fitLink([{ bytes: 0, roundTripMs: 0.5 }, { bytes: 4 * MiB, roundTripMs: 0.25 }])).toEqual({ fixedMs: 0.5, msPerMiB: 0 })
    // ...and a measurement times every payload size and reports the fit of its own samples
    const link = await measureLink()
    expect(link.samples.map((x) => x.bytes)).toEqual([...LINK_SIZES_BYTES])
    expect(link.samples.every((x) => Number.isFinite(x.roundTripMs) && x.roundTripMs >= 0)).toBe(true)
    expect({ fixedMs: link.fixedMs, msPerMiB: link.msPerMiB }).toEqual(fitLink(link.samples))
  })

  it('reports progress in order: compiles, each device measured one after another, then the link', () => {
    expect(progress.map((p) => p.doneSteps)).toEqual(progress.map((_, i) => i + 1))
    expect(progress.every((p) => p.totalSteps === progress.length)).toBe(true)
    const order = progress.filter((p) => p.stage === 'measure').map((p) => p.device)
    expect([...new Set(order)]).toEqual(ready.map((d) => d.id))
    // each device's measurements are contiguous: no two devices interleave
    expect(order.filter((d, i) => i === 0 || order[i - 1] !== d)).toEqual(ready.map((d) => d.id))
    expect(progress[progress.length - 1].stage).toBe('link')
  })

  it('lets Auto plan from it: a valid placement, predicted rates, one sentence', () => {
    const plan = planAuto(model.config, devices, profile, { prefillChunkTokens: CHUNK })
    expect(parsePlacement(JSON.parse(JSON.stringify(plan.placement)), model.config, devices)).toEqual(plan.placement)
    expect(plan.predictedTokensPerSec.prefill).toBeCloseTo((CHUNK * 1000) / plan.predictedMs.prefill, 6)
    expect(plan.predictedTokensPerSec.decode).toBeGreaterThan(0)
    expect(plan.explanation).toMatch(/^Prefill .* per 64-token chunk.*\.$/)
    expect(plan.explanation).not.toMatch(/\n/)
  })
})

describe('profile cache keys', () => {
  it('depend on the ready device set and ORT version, not on list order; the shape key on how weights are stored', async () => {
    const keys = profileCacheKeys(model, devices)
    expect(profileCacheKeys(model, [...devices].reverse())).toEqual(keys)
    expect(keys.deviceKey).toMatch(/onnxruntime \d+\.\d+/)
    for (const d of ready) expect(keys.deviceKey).toContain(`${d.id}=${d.ep}`)
    const oneFailed = devices.map((d) => (d.id === 'cpu-2' ? { ...d, status: 'failed' as const, reason: 'test' } : d))
    expect(profileCacheKeys(model, oneFailed).deviceKey).not.toBe(keys.deviceKey)
    expect(profileCacheKeys(model, devices, { threads: 1 }).deviceKey).not.toBe(keys.deviceKey)
    expect(keys.shapeKey.startsWith(modelShapeKey(model.config))).toBe(true)
    const q8 = await compilable('stories260K/stories260K_q80.bin')
    expect(modelShapeKey(q8.config)).toBe(modelShapeKey(model.config))
    expect(profileCacheKeys(q8, devices).shapeKey).not.toBe(keys.shapeKey)
  })
})

describe('profiling edge cases', () => {
  it('turns run medians into group times: minus the overhead, floored, never decreasing', () => {
    const runs = [
      { tokens: 1, ms: 0.05 },
      { tokens: 16, ms: 0.3 },
      { tokens: 64, ms: 0.2 },
      { tokens: 256, ms: 1.1 }
    ]
    const got = groupSamples(runs, 0.1)
    expect(got.map((s) => s.tokens)).toEqual([1, 16, 64, 256])
    expect(got[0].ms).toBe(MIN_GROUP_MS)
    expect(got[1].ms).toBeCloseTo(0.2, 12)
    expect(got[2].ms).toBeCloseTo(0.2, 12)
    expect(got[3].ms).toBeCloseTo(1.0, 12)
  })

  it('scales the layer groups to what the fused layer costs, within [MIN_CALIBRATION_SCALE, 1]; final groups stay as measured', () => {
    const overhead = 0.1
    const at = (ms1: number, ms64: number): RunSample[] => [
      { tokens: 1, ms: ms1 + overhead },
      { tokens: 64, ms: ms64 + overhead }
    ]
    // seven layer groups of 0.1 ms (1 token) and 1 ms (64 tokens) alone: 0.7 and 7 ms in all
    const groups = new Map<GroupKind, RunSample[]>([...LAYER_GROUP_KINDS.map((k): [GroupKind, RunSample[]] => [k, at(0.1, 1)]), ['lm-head', [{ tokens: 1, ms: 0.3 + overhead }]]])
    // fused: 0.35 ms at 1 token (half), 7.7 ms at 64 (more than the parts: noise, held at 1)
    const stack = at(0.35, 7.7)
    const scales = calibrationScales(stack, groups, overhead, 1)
    expect(scales.get(1)).toBeCloseTo(0.5, 12)
    expect(scales.get(64)).toBe(1)
    expect(calibrationScales(at(0.0001, 7), groups, overhead, 1).get(1)).toBe(MIN_CALIBRATION_SCALE)
    const timings = deviceGroupTimings(groups, stack, overhead, 1)
    const ffn = timings.find((t) => t.group === 'ffn')?.samples
    expect(ffn?.[0].ms).toBeCloseTo(0.05, 12)
    expect(ffn?.[1].ms).toBeCloseTo(1, 12)
    expect(timings.find((t) => t.group === 'lm-head')?.samples[0].ms).toBeCloseTo(0.3, 12)
    // without a stack measurement nothing is scaled
    expect(deviceGroupTimings(groups, undefined, overhead, 1).find((t) => t.group === 'ffn')?.samples[0].ms).toBeCloseTo(0.1, 12)
  })

  it('calibrates a partition part like its group, and leaves out a part whose group was not measured', () => {
    const overhead = 0.1
    const at = (ms1: number, ms64: number): RunSample[] => [
      { tokens: 1, ms: ms1 + overhead },
      { tokens: 64, ms: ms64 + overhead }
    ]
    const groups = new Map<GroupKind, RunSample[]>([...LAYER_GROUP_KINDS.map((k): [GroupKind, RunSample[]] => [k, at(0.1, 1)])])
    // the fused layer costs half its groups at both lengths: every layer-kind time is halved
    const stack = at(0.35, 3.5)
    const parts = new Map([
      ['ffn', { share: 0.5, runs: at(0.08, 0.6) }],
      ['lm-head', { share: 0.5, runs: [{ tokens: 1, ms: 0.2 }] }]
    ] as const)
    const got = devicePartitionTimings(parts, groups, stack, overhead, 1)
    expect(got.map((p) => p.group)).toEqual(['ffn'])
    expect(got[0].share).toBe(0.5)
    expect(got[0].samples[0].ms).toBeCloseTo(0.04, 12)
    expect(got[0].samples[1].ms).toBeCloseTo(0.3, 12)
  })

  it('rejects when aborted mid-measurement (nothing more is measured) and when no device is ready', async () => {
    const cpuOnly = devices.filter((d) => d.id === 'cpu')
    const controller = new AbortController()
    const seen: ProfileProgress[] = []
    const run = profileDevices(model, cpuOnly, {
      signal: controller.signal,
      onProgress: (p) => {
        seen.push(p)
        if (p.stage === 'measure') controller.abort(new Error('stop profiling'))
      }
    })
    // the rejection comes only after the device worker has exited (the profiler disposes it first)
    await expect(run).rejects.toThrow('stop profiling')
    // the abort came with the first measurement: no second one was started
    expect(seen.filter((p) => p.stage === 'measure')).toHaveLength(1)
    await expect(profileDevices(model, devices.map((d) => ({ ...d, status: 'failed' as const })))).rejects.toThrow(/no ready device/)
  }, 60_000)
})
