/**
 * @file The NPU path end to end on the virtual NPU: the "prefill on NPU" preset on stories260K puts the norms
 * and matmuls of prefill on the virtual NPU (static-shape graphs for the prefill chunk, the last chunk padded),
 * rope, attention and all of decode on the CPU — and gives the reference forward's logits and the published
 * greedy ids, with the NPU's own counters proving it ran the prefill.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { discoverDevices, discoverEpDevices, OrtCRuntime, registerVirtualNpu, VIRTUAL_NPU_EP, virtualNpuStats, type DeviceInfo, type RegisteredLibrary } from '../../main/engine/devices'
import { calibrate, loadModel, shadowLayers, w8a8Linears } from '../../main/engine/model'
import { outlierModel } from '../fixtures/outlier-model'
import { Rng } from '../fixtures/rng'
import { buildPreset } from '../../main/engine/plan'
import { compilerSkipReason } from '../devices/compiler'
import { EXACT_TOLERANCE } from '../graph/compare'
import { sharedModel } from '../helpers/paths'
import { PUBLISHED_STORIES260K_IDS } from '../helpers/published'
import { compareHetero, prefillW8A8Reference } from './hetero-compare'

/** BOS + the first 40 published ids: 41 tokens, prefilled in chunks of 32, the NPU's shortest (the last one padded from 9). */
const PROMPT = [1, ...PUBLISHED_STORIES260K_IDS.slice(0, 40)]
const CHUNK = 32
/** W8A8 against the reference's W8A8: relative to the largest logit (see the test) */
const W8A8_TOLERANCE = 0.02

let devices: DeviceInfo[] = []
let npu: RegisteredLibrary
let stories: { config: Awaited<ReturnType<typeof loadModel>>['config']; weights: NonNullable<Awaited<ReturnType<typeof loadModel>>['weights']> }

beforeAll(async () => {
  if (compilerSkipReason !== null) return
  npu = await registerVirtualNpu(OrtCRuntime.open())
  const cpu = (await discoverDevices({ probe: false })).filter((d) => d.id === 'cpu')
  const ep = await discoverEpDevices({ virtualNpu: true })
  devices = [...cpu, ...ep.devices]
  const m = await loadModel(sharedModel('stories260K/stories260K.gguf'))
  if (!m.weights) throw new Error('no weights')
  stories = { config: { ...m.config, contextLength: 128 }, weights: m.weights }
}, 180_000)

describe.skipIf(compilerSkipReason !== null)('prefill on the virtual NPU, decode on the CPU', () => {
  it('stories260K: reference logits, published greedy ids, prefill run by the NPU', async () => {
    const npuDevice = devices.find((d) => d.ep === VIRTUAL_NPU_EP)
    expect(npuDevice?.status, npuDevice?.reason ?? '').toBe('ready')
    expect(npuDevice?.contract.staticShapesOnly).toBe(true)
    const { placement } = buildPreset('npu-prefill-gpu-decode', stories.config, devices, { prefillChunkTokens: CHUNK })
    const npuId = npuDevice?.id ?? ''
    // prefill runs on the NPU but for what it refuses (rope: RotaryEmbedding; attention: a growing cache); decode all on the CPU
    const prefill = placement.phases.prefill
    expect(prefill.device).toBe(npuId)
    const moved = new Set<string>(prefill.groups.filter((g) => g.device !== npuId).map((g) => g.group))
    expect(moved).toContain('attention')
    for (const kept of ['qkv', 'attn-out', 'ffn', 'attn-norm', 'ffn-norm']) expect(moved.has(kept), kept).toBe(false)
    expect(placement.phases.decode.device).toBe('cpu')
    expect(placement.phases.decode.groups.every((g) => g.device === 'cpu')).toBe(true)

    const before = virtualNpuStats(npu.path)
    const decodeSteps = PUBLISHED_STORIES260K_IDS.length - PROMPT.length
    const r = await compareHetero(stories, placement, devices, PROMPT, decodeSteps)
    const after = virtualNpuStats(npu.path)

    expect(r.top1Equal).toBe(true)
    expect(r.maxAbsDiff).toBeLessThan(EXACT_TOLERANCE * r.logitScale)
    expect(r.ids).toEqual(PUBLISHED_STORIES260K_IDS.slice(PROMPT.length - 1))
    // 2 prefill chunks (32 + 9 padded to 32), each through the NPU's fused graphs; decode never touches it
    expect(after.graphRuns - before.graphRuns).toBeGreaterThanOrEqual(2)
    expect(after.graphsCompiled).toBeGreaterThan(before.graphsCompiled)
    const npuUsage = r.usage.devices.find((d) => d.id === npuId)
    expect(npuUsage?.busyMs ?? 0).toBeGreaterThan(0)
  }, 180_000)

  it('stories260K in W8A8: the NPU runs its static prefill segments as QuantizeLinear → MatMulInteger, matching the reference’s W8A8', async () => {
    const npuDevice = devices.find((d) => d.ep === VIRTUAL_NPU_EP)
    const { placement } = buildPreset('npu-prefill-gpu-decode', stories.config, devices, { prefillChunkTokens: CHUNK })
    const calibration = calibrate(stories, [PROMPT])
    const scales = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.scale]))
    // W8A8 is the NPU's: prefill's matmuls; decode runs on the CPU in float
    const reference = prefillW8A8Reference(w8a8Linears(stories, calibration, { shadow: false, prunedPercent: 0 }))
    const before = virtualNpuStats(npu.path)
    // the NPU's sessions refuse CPU fallback: compiling its segments at all proves it took every W8A8 op
    const r = await compareHetero(stories, placement, devices, PROMPT, 8, { w8a8: scales, reference: reference.options, onPhase: (p) => (reference.prefill = p === 'prefill') })
    const after = virtualNpuStats(npu.path)
    expect(r.top1Equal).toBe(true)
    // not to float rounding: an activation within a rounding error of a half step goes to the other int8 step when the
    // NPU's fused norm differs from the reference's in the last bit, and moves that matmul's output by sx·|w|
    expect(r.maxAbsDiff).toBeLessThan(W8A8_TOLERANCE * r.logitScale)
    expect(after.graphRuns - before.graphRuns).toBeGreaterThanOrEqual(2)
    expect(r.usage.devices.find((d) => d.id === npuDevice?.id)?.busyMs ?? 0).toBeGreaterThan(0)
  }, 180_000)
  it('W8A8 with shadow segments on an outlier model: the NPU runs int8, the CPU repairs what clipped — the reference’s shadowed W8A8 in prefill (float decode), not the clipped one', async () => {
    const npuDevice = devices.find((d) => d.ep === VIRTUAL_NPU_EP)
    const model = outlierModel({ seed: 41, dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 80, contextLength: 128 }, { channels: 2, minFactor: 20, maxFactor: 60 })
    const rng = new Rng(17)
    const text = (n: number): number[] => Array.from({ length: n }, () => 1 + Math.floor(rng.uniform() * 79))
    const calibration = calibrate(model, [text(48)])
    const scales = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.scale]))
    const hot = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.hotChannels]))
    const { placement } = buildPreset('npu-prefill-gpu-decode', model.config, devices, { prefillChunkTokens: CHUNK })
    const shadowed = prefillW8A8Reference(w8a8Linears(model, calibration, { shadow: true, prunedPercent: 0 }))
    const clipped = prefillW8A8Reference(w8a8Linears(model, calibration, { shadow: false, prunedPercent: 0 }))
    const onPhase = (p: 'prefill' | 'decode'): void => {
      shadowed.prefill = clipped.prefill = p === 'prefill'
    }
    const before = virtualNpuStats(npu.path)
    const r = await compareHetero(model, placement, devices, text(41), 6, { w8a8: scales, reference: shadowed.options, contrast: clipped.options, onPhase, shadow: { layers: shadowLayers(calibration, 0), hot } })
    const after = virtualNpuStats(npu.path)
    expect(r.top1Equal).toBe(true)
    expect(r.maxAbsDiff).toBeLessThan(W8A8_TOLERANCE * r.logitScale)
    // the shadow is what brings the NPU's int8 result to the shadowed reference: without it the logits are far off
    expect(r.contrastDiff).toBeGreaterThan(20 * r.maxAbsDiff)
    expect(after.graphRuns - before.graphRuns).toBeGreaterThanOrEqual(2)
    expect(r.usage.devices.find((d) => d.id === npuDevice?.id)?.busyMs ?? 0).toBeGreaterThan(0)
  }, 180_000)
})
