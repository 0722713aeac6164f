/**
 * @file The cost model and the solver on synthetic profiles: the obviously best device wins; a phase split
 * wins when the devices differ per phase; a partition's predicted time is HeteroInfer's
 * max(T_a(p), T_b(1−p)) + T_sync on a hand-computed example and the solver takes the minimum of that and
 * T_a(all), T_b(all); measured partition parts replace the linear-in-rows guess; failed, unprobed and unprofiled devices are never chosen.
 */
import { describe, expect, it } from 'vitest'
import type { ModelConfig } from '../../main/engine/model'
import { assignGroups, parsePlacement, parseProfile, phaseDevices, predictPhaseMs, predictPlacement, ProfileError, solvePlacement, type Placement, type Profile } from '../../main/engine/plan'
import { device, npuLaptop, syntheticProfile, testConfig, thisMachine } from './fixtures'

const MIB = 2 ** 20

/** `config` with every property read counted: the cost model reads it for each group of each layer it costs. */
function countedReads(config: ModelConfig): { config: ModelConfig; reads: () => number } {
  let reads = 0
  const counted = new Proxy(config, {
    get(target, key, receiver) {
      reads++
      return Reflect.get(target, key, receiver)
    }
  })
  return { config: counted, reads: () => reads }
}

describe('solvePlacement', () => {
  it('picks the obviously fastest device for both phases and explains it in one sentence', () => {
    const config = testConfig()
    const devices = thisMachine()
    const profile = syntheticProfile(config, {
      cpu: { rest: { fixedMs: 0.01, perTokenMs: 0.001 } },
      'cpu-2': { rest: { fixedMs: 0.02, perTokenMs: 0.002 } },
      'webgpu-0': { rest: { fixedMs: 0.1, perTokenMs: 0.01 } }
    })
    const s = solvePlacement(config, devices, profile, { prefillChunkTokens: 256 })
    expect(s.placement.phases.prefill).toEqual({ device: 'cpu', groups: [], partitions: [] })
    expect(s.placement.phases.decode).toEqual({ device: 'cpu', groups: [], partitions: [] })
    // 5 layers × 7 groups + final-norm at 256 tokens, lm-head at its one row; decode: all 37 at one token
    expect(s.predictedMs.prefill).toBeCloseTo(36 * (0.01 + 0.256) + 0.011, 9)
    expect(s.predictedMs.decode).toBeCloseTo(37 * 0.011, 9)
    expect(s.explanation).toBe('Prefill and decode on the CPU (cpu) (9.6 ms per 256-token chunk, 0.41 ms per token); the CPU (cpu-2) would be 2.0× slower for both.')
  })

  it('splits the phases when one device is best at prefill and another at decode', () => {
    const config = testConfig()
    const devices = [device('cpu', 'cpu'), device('dml-0', 'igpu'), device('coreml-0', 'npu')]
    // every extra segment costs a session run, so splitting a phase only pays where the devices differ a lot
    const profile = syntheticProfile(config, {
      cpu: { rest: { fixedMs: 0.1, perTokenMs: 0.01 }, runOverheadMs: 0.2 },
      'dml-0': { rest: { fixedMs: 0.05, perTokenMs: 0.002 }, runOverheadMs: 0.2 },
      // high fixed cost, nearly free per token: wins long runs only
      'coreml-0': { rest: { fixedMs: 0.5, perTokenMs: 0.0001 }, runOverheadMs: 0.2 }
    }, [], { fixedMs: 0.01, msPerMiB: 0 })
    const s = solvePlacement(config, devices, profile, { prefillChunkTokens: 256 })
    // every layer's groups prefill on the NPU (the one-row lm-head may go elsewhere); decode is the iGPU's
    const layers = assignGroups(s.placement.phases.prefill, config).filter((a) => a.group.layer !== null)
    expect(new Set(layers.map((a) => a.device))).toEqual(new Set(['coreml-0']))
    expect(s.placement.phases.decode).toEqual({ device: 'dml-0', groups: [], partitions: [] })
    expect(s.explanation).toMatch(/^Prefill (on the NPU|with .+, everything else on the NPU) \(.+ ms per 256-token chunk\); decode on the integrated GPU \(.+ ms per token\); everything on the integrated GPU would be \d+(\.\d)?× slower for prefill and as fast for decode\.$/)
  })

  it('with an int8-only NPU, keeps prefill matmuls on the NPU and everything it cannot run elsewhere', () => {
    const config = testConfig()
    const devices = npuLaptop()
    const profile = syntheticProfile(config, {
      cpu: { rest: { fixedMs: 0.1, perTokenMs: 0.01 } },
      'dml-0': { rest: { fixedMs: 0.05, perTokenMs: 0.002 } },
      'qnn-0': { rest: { fixedMs: 0.1, perTokenMs: 0.0001 } }
    }, [], { fixedMs: 0.01, msPerMiB: 0 })
    const s = solvePlacement(config, devices, profile, { prefillChunkTokens: 256 })
    const prefill = assignGroups(s.placement.phases.prefill, config).filter((a) => a.group.layer === 0)
    for (const a of prefill) {
      const onNpu = a.device === 'qnn-0' || a.partition?.devices.includes('qnn-0') === true
      expect(onNpu, `${a.group.kind}`).toBe(['qkv', 'attn-out', 'ffn'].includes(a.group.kind))
    }
    // the NPU makes prefill faster than the best device alone, and nothing is predicted slower than that
    const ctx = { config, profile, devices }
    const alone = parsePlacement({ version: 1, name: 'igpu', prefillChunkTokens: 256, phases: { prefill: { device: 'dml-0' }, decode: { device: 'dml-0' } } }, config, devices)
    const igpu = predictPlacement(alone, ctx)
    expect(s.predictedMs.prefill).toBeLessThan(igpu.prefill)
    expect(s.predictedMs.decode).toBeLessThanOrEqual(igpu.decode)
    expect(s.explanation).toMatch(/^Prefill with .*(on|% on) the NPU.*, everything else on the integrated GPU \(.+ per 256-token chunk\); decode .+ per token\); everything on the integrated GPU would be/)
  })

  it("predicts a partition with HeteroInfer's max(T_a(p), T_b(1−p)) + T_sync, and takes the least of that and T_a(all), T_b(all)", () => {
    // one layer, q 80 rows, k and v 40 each, so every grid ratio cuts exactly; only qkv costs anything
    const config = testConfig({ nLayers: 1, dim: 80, nHeads: 8, nKvHeads: 4, headDim: 10, ropeDim: 10, hiddenDim: 160 })
    const devices = [device('gpu-0', 'igpu'), device('npu-0', 'npu')]
    const msPerMiB = 1000
    const link = { fixedMs: 0.5, msPerMiB }
    const profile = syntheticProfile(config, { 'gpu-0': { groups: { qkv: { fixedMs: 10, perTokenMs: 0 } } }, 'npu-0': { groups: { qkv: { fixedMs: 30, perTokenMs: 0 } } } }, [], link)
    const ctx = { config, profile, devices }
    // decode, one token: b first receives attn_in_0 [1, 1, 80] f32, then hands back its rows of q, k, v
    const inMs = 0.5 + ((80 * 4) / MIB) * msPerMiB
    const syncMs = (p: number): number => 0.5 + (((1 - p) * (80 + 40 + 40) * 4) / MIB) * msPerMiB
    const formula = (p: number): number => Math.max(10 * p, inMs + 30 * (1 - p)) + syncMs(p)
    const split = (ratio: number): Placement =>
      parsePlacement({ version: 1, name: 'p', prefillChunkTokens: 16, phases: { prefill: { device: 'gpu-0' }, decode: { device: 'gpu-0', partitions: [{ layer: 0, group: 'qkv', by: 'rows', devices: ['gpu-0', 'npu-0'], ratio }] } } }, config, devices)
    for (const p of [0.25, 0.5, 0.75, 0.8]) expect(predictPhaseMs(split(p), 'decode', ctx)).toBeCloseTo(formula(p), 12)
    const single = (id: string): Placement => parsePlacement({ version: 1, name: 's', prefillChunkTokens: 16, phases: { prefill: { device: id }, decode: { device: id } } }, config, devices)
    expect(predictPlacement(single('gpu-0'), ctx)).toEqual({ prefill: 10, decode: 10 })
    expect(predictPlacement(single('npu-0'), ctx)).toEqual({ prefill: 30, decode: 30 })

    const s = solvePlacement(config, devices, profile)
    const best = Math.min(...[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9].map(formula), 10, 30)
    expect(best).toBeLessThan(10)
    expect(s.predictedMs.decode).toBeCloseTo(best, 12)
    expect(s.placement.phases.decode).toEqual({ device: 'gpu-0', groups: [], partitions: [{ layer: 'all', group: 'qkv', by: 'rows', devices: ['gpu-0', 'npu-0'], ratio: 0.8 }] })
    expect(s.explanation).toMatch(/; decode with qkv split by rows \(80% on the integrated GPU, 20% on the NPU\), everything else on the integrated GPU \(8\.6 ms per token\);/)

    // when the hand-off costs more than the split saves, the whole matmul stays on the faster device
    const slowLink = syntheticProfile(config, { 'gpu-0': { groups: { qkv: { fixedMs: 10, perTokenMs: 0 } } }, 'npu-0': { groups: { qkv: { fixedMs: 30, perTokenMs: 0 } } } }, [], { fixedMs: 5, msPerMiB: 0 })
    const t = solvePlacement(config, devices, slowLink)
    expect(t.placement.phases.decode).toEqual({ device: 'gpu-0', groups: [], partitions: [] })
    expect(t.predictedMs.decode).toBe(10)
  })

  it('prices row parts from measured partition samples (piecewise linear in the share), not as a share of the whole', () => {
    const config = testConfig({ nLayers: 1, dim: 80, nHeads: 8, nKvHeads: 4, headDim: 10, ropeDim: 10, hiddenDim: 160 })
    const devices = [device('gpu-0', 'igpu'), device('npu-0', 'npu')]
    const linear = syntheticProfile(config, { 'gpu-0': { groups: { qkv: { fixedMs: 10, perTokenMs: 0 } } }, 'npu-0': { groups: { qkv: { fixedMs: 30, perTokenMs: 0 } } } })
    // half the rows cost 8 of 10 ms on the GPU (a narrower matmul uses it worse), 12 of 30 on the NPU
    const halves = [
      { group: 'qkv', share: 0.5, samples: [{ tokens: 1, ms: 8 }] },
      { group: 'qkv', share: 0.5, samples: [{ tokens: 1, ms: 12 }] }
    ] as const
    const measured = parseProfile({ ...linear, devices: linear.devices.map((d, i) => ({ ...d, partitions: [halves[i]] })) })
    const split = (ratio: number): Placement =>
      parsePlacement({ version: 1, name: 'p', prefillChunkTokens: 16, phases: { prefill: { device: 'gpu-0' }, decode: { device: 'gpu-0', partitions: [{ layer: 0, group: 'qkv', by: 'rows', devices: ['gpu-0', 'npu-0'], ratio }] } } }, config, devices)
    // free links: a part's time is all there is; through (0, 0), (0.5, half), (1, whole)
    const piecewise = (x: number, half: number, whole: number): number => (x <= 0.5 ? (x / 0.5) * half : half + ((x - 0.5) / 0.5) * (whole - half))
    for (const p of [0.25, 0.5, 0.8]) {
      const gpu = piecewise(p, 8, 10)
      const npu = piecewise(1 - p, 12, 30)
      expect(predictPhaseMs(split(p), 'decode', { config, profile: measured, devices })).toBeCloseTo(Math.max(gpu, npu), 12)
      expect(predictPhaseMs(split(p), 'decode', { config, profile: linear, devices })).toBeCloseTo(Math.max(10 * p, 30 * (1 - p)), 12)
    }
    // at 0.5 the linear guess says max(5, 15) = 15, the measured parts max(8, 12) = 12
    expect(predictPhaseMs(split(0.5), 'decode', { config, profile: measured, devices })).toBeCloseTo(12, 12)
    expect(predictPhaseMs(split(0.5), 'decode', { config, profile: linear, devices })).toBeCloseTo(15, 12)
    // and the solver follows: the linear guess splits 0.8 / 0.2 at 8 ms; measured, 0.8 costs max(9.2, 4.8) and
    // 0.7 costs max(8.8, 7.2) = 8.8, still under the GPU alone
    const s = solvePlacement(config, devices, measured)
    expect(s.placement.phases.decode.partitions).toEqual([{ layer: 'all', group: 'qkv', by: 'rows', devices: ['gpu-0', 'npu-0'], ratio: 0.7 }])
    expect(s.predictedMs.decode).toBeCloseTo(8.8, 12)
  })

  it('never picks a failed, unprobed or unprofiled device, however fast its profile says it is', () => {
    const config = testConfig()
    const devices = [device('cpu', 'cpu'), device('dml-0', 'igpu', { status: 'failed' }), device('webgpu-0', 'igpu', { status: 'unprobed' }), device('cpu-2', 'cpu')]
    const profile = syntheticProfile(config, {
      cpu: { rest: { fixedMs: 1, perTokenMs: 0.1 } },
      'dml-0': { rest: { fixedMs: 0, perTokenMs: 0.0001 } },
      'webgpu-0': { rest: { fixedMs: 0, perTokenMs: 0.0001 } }
    })
    const s = solvePlacement(config, devices, profile)
    for (const phase of ['prefill', 'decode'] as const) expect(phaseDevices(s.placement.phases[phase], config)).toEqual(['cpu'])
    expect(s.explanation).toMatch(/; no other profiled device can run the whole model to compare with\.$/)
  })

  it('refuses a profile measured for another model shape', () => {
    const profile = syntheticProfile(testConfig({ dim: 128 }), { cpu: {} })
    expect(() => solvePlacement(testConfig(), thisMachine(), profile)).toThrow(ProfileError)
    expect(() => solvePlacement(testConfig(), thisMachine(), profile)).toThrow(/the profile is for "llama dim=128 .*", but the model is "llama dim=64 .*"; profile it again/)
  })

  it('extrapolates deep models exactly: the search on 2 and 3 layers predicts what the full model costs', () => {
    const devices = npuLaptop()
    const profileFor = (config: ModelConfig): Profile =>
      syntheticProfile(config, {
        cpu: { rest: { fixedMs: 0.1, perTokenMs: 0.01 }, runOverheadMs: 0.05 },
        'dml-0': { rest: { fixedMs: 0.05, perTokenMs: 0.002 }, runOverheadMs: 0.2 },
        'qnn-0': { rest: { fixedMs: 0.1, perTokenMs: 0.0001 }, runOverheadMs: 0.3 }
      }, [], { fixedMs: 0.02, msPerMiB: 5 })
    const config = testConfig({ nLayers: 24 })
    const profile = profileFor(config)
    const s = solvePlacement(config, devices, profile)
    // The search's work does not grow with the depth, counted rather than timed: reads of the model config
    // by the solve, less those of checking and predicting the chosen placement on the full model (what the
    // solver does last, and which does grow with the depth). Coordinate descent may take one pass or two
    // depending on the costs, so the search alone may differ by up to 2× between depths; costing every layer
    // of every candidate would read ~100× more at 2400 layers than at 24.
    const searchReads = (nLayers: number): number => {
      const deep = testConfig({ nLayers })
      const deepProfile = profileFor(deep)
      const solving = countedReads(deep)
      const solved = solvePlacement(solving.config, devices, deepProfile)
      const finishing = countedReads(deep)
      predictPlacement(parsePlacement(solved.placement, finishing.config, devices), { config: finishing.config, profile: deepProfile, devices })
      return solving.reads() - finishing.reads()
    }
    expect(searchReads(2400)).toBeLessThan(2 * searchReads(24))
    const full = predictPlacement(s.placement, { config, profile, devices })
    expect(s.predictedMs.prefill).toBeCloseTo(full.prefill, 9)
    expect(s.predictedMs.decode).toBeCloseTo(full.decode, 9)
    expect(s.explanation.endsWith('.')).toBe(true)
    expect(s.explanation.slice(0, -1)).not.toMatch(/\.\s/)
  })
})
