/**
 * @file Presets on this machine's device list (cpu, cpu-2, webgpu-0 on lavapipe; no NPU → fallback notes),
 * on a laptop with an NPU, on a CPU-only machine, and on the devices discovery really finds here.
 */
import { describe, expect, it } from 'vitest'
import { discoverDevices } from '../../main/engine/devices'
import { assignGroups, buildPreset, DEFAULT_PREFILL_CHUNK_TOKENS, parsePlacement, phaseDevices, PRESET_IDS, STATIC_CHUNK_TOKENS, type PresetId } from '../../main/engine/plan'
import { device, npuLaptop, syntheticProfile, testConfig, thisMachine } from './fixtures'

const config = testConfig()
const devices = thisMachine()

/** Device per group kind of layer 0 plus the final groups, for compact assertions. */
function layout(id: PresetId, phase: 'prefill' | 'decode', devs = devices): Record<string, string> {
  const { placement } = buildPreset(id, config, devs)
  return Object.fromEntries(assignGroups(placement.phases[phase], config).filter((a) => a.group.layer === 0 || a.group.layer === null).map((a) => [a.group.kind, a.partition === null ? a.device : `${a.partition.by}:${a.partition.devices.join('+')}`]))
}

describe('presets on this machine (cpu, cpu-2, software GPU; no NPU)', () => {
  it('CPU only and GPU only put everything on one device, without a note', () => {
    const cpu = buildPreset('cpu', config, devices)
    expect(cpu.note).toBeNull()
    expect(cpu.placement).toMatchObject({ version: 1, name: 'CPU only', prefillChunkTokens: DEFAULT_PREFILL_CHUNK_TOKENS, phases: { prefill: { device: 'cpu', groups: [], partitions: [] }, decode: { device: 'cpu', groups: [], partitions: [] } } })
    const gpu = buildPreset('gpu', config, devices)
    expect(gpu.note).toBeNull()
    expect(gpu.placement.phases.decode).toEqual({ device: 'webgpu-0', groups: [], partitions: [] })
  })

  it('"prefill on NPU, decode on GPU" falls back to the software GPU for prefill and says so', () => {
    const r = buildPreset('npu-prefill-gpu-decode', config, devices)
    expect(r.note).toBe('No NPU found, so prefill runs on the software GPU instead.')
    expect(r.placement.phases.prefill.device).toBe('webgpu-0')
    expect(r.placement.phases.decode.device).toBe('webgpu-0')
  })

  it('with a profile, the NPU fallback is the device predicted fastest for prefill', () => {
    const profile = syntheticProfile(config, { cpu: { rest: { fixedMs: 0, perTokenMs: 0.01 } }, 'cpu-2': { rest: { fixedMs: 0, perTokenMs: 0.02 } }, 'webgpu-0': { rest: { fixedMs: 0, perTokenMs: 0.1 } } })
    const r = buildPreset('npu-prefill-gpu-decode', config, devices, { profile })
    expect(r.note).toBe('No NPU found, so prefill runs on the CPU (cpu) instead.')
    expect(r.placement.phases.prefill.device).toBe('cpu')
  })

  it('layer split: matmuls on the software GPU, the rest on the CPU, and the note says they share cores', () => {
    const r = buildPreset('layer-split', config, devices)
    expect(r.note).toBe('No NPU found, so matmuls run on the software GPU and everything else on the CPU (cpu); the software GPU and the CPU (cpu) share the same CPU cores, so expect no speed-up.')
    const want = { 'attn-norm': 'cpu', qkv: 'webgpu-0', rope: 'cpu', attention: 'cpu', 'attn-out': 'webgpu-0', 'ffn-norm': 'cpu', ffn: 'webgpu-0', 'final-norm': 'cpu', 'lm-head': 'webgpu-0' }
    expect(layout('layer-split', 'prefill')).toEqual(want)
    expect(layout('layer-split', 'decode')).toEqual(want)
  })

  it('tensor split: every matmul group split by rows between the software GPU and the CPU', () => {
    const r = buildPreset('tensor-split', config, devices)
    expect(r.note).toMatch(/^No NPU found, so matmuls are split between the software GPU and the CPU \(cpu\), and the rest runs on the CPU \(cpu\);/)
    const split = 'rows:webgpu-0+cpu'
    expect(layout('tensor-split', 'decode')).toEqual({ 'attn-norm': 'cpu', qkv: split, rope: 'cpu', attention: 'cpu', 'attn-out': split, 'ffn-norm': 'cpu', ffn: split, 'final-norm': 'cpu', 'lm-head': split })
    expect(r.placement.phases.prefill.partitions.every((p) => p.by === 'rows' && p.ratio === 0.5)).toBe(true)
  })

  it('Auto needs a profile, and with one it is the solver’s choice with its explanation as the note', () => {
    expect(() => buildPreset('auto', config, devices)).toThrow(/needs a device profile/)
    const profile = syntheticProfile(config, { cpu: { rest: { fixedMs: 0.01, perTokenMs: 0.001 } }, 'webgpu-0': { rest: { fixedMs: 0.1, perTokenMs: 0.01 } } })
    const r = buildPreset('auto', config, devices, { profile })
    expect(r.placement.name).toBe('Auto')
    expect(r.placement.phases.decode.device).toBe('cpu')
    expect(r.note).toMatch(/^Prefill and decode on the CPU \(cpu\) \(.+\); the software GPU would be .+ slower for both\.$/)
  })

  it('every preset round-trips through JSON and the validator', () => {
    const profile = syntheticProfile(config, { cpu: { rest: { fixedMs: 0.01, perTokenMs: 0.001 } } })
    for (const id of PRESET_IDS) {
      const { placement } = buildPreset(id, config, devices, { profile })
      expect(parsePlacement(JSON.parse(JSON.stringify(placement)), config, devices)).toEqual(placement)
    }
  })
})

describe('presets on a laptop with an int8-only NPU and an integrated GPU', () => {
  const laptop = npuLaptop()

  it('prefill on the NPU keeps only the matmuls there (its contract refuses the rest) and says so', () => {
    const r = buildPreset('npu-prefill-gpu-decode', config, laptop)
    expect(r.note).toBe('The NPU cannot take attn-norm, rope, attention, ffn-norm and final-norm, so they run on the integrated GPU.')
    expect(layout('npu-prefill-gpu-decode', 'prefill', laptop)).toEqual({ 'attn-norm': 'dml-0', qkv: 'qnn-0', rope: 'dml-0', attention: 'dml-0', 'attn-out': 'qnn-0', 'ffn-norm': 'dml-0', ffn: 'qnn-0', 'final-norm': 'dml-0', 'lm-head': 'qnn-0' })
    expect(r.placement.phases.decode).toEqual({ device: 'dml-0', groups: [], partitions: [] })
  })

  it('an NPU in prefill takes the static chunk: 256 by default (capped by the context), 32 at least, and the CPU preset keeps its own', () => {
    const npuPlacement = buildPreset('npu-prefill-gpu-decode', config, laptop).placement
    expect(npuPlacement.prefillChunkTokens).toBe(Math.min(STATIC_CHUNK_TOKENS.default, config.contextLength))
    expect(buildPreset('cpu', config, laptop).placement.prefillChunkTokens).toBe(DEFAULT_PREFILL_CHUNK_TOKENS)
    expect(() => parsePlacement({ ...npuPlacement, prefillChunkTokens: 16 }, config, laptop)).toThrow('placement prefillChunkTokens: device "qnn-0" runs static-shape graphs compiled for the chunk, which must be from 32 to 512 tokens, got 16')
    expect(parsePlacement({ ...npuPlacement, prefillChunkTokens: 512 }, config, laptop).prefillChunkTokens).toBe(512)
    // without the NPU in prefill, a short chunk is fine
    expect(parsePlacement({ ...buildPreset('gpu', config, laptop).placement, prefillChunkTokens: 16 }, config, laptop).prefillChunkTokens).toBe(16)
  })

  it('layer split is HeteroInfer’s: matmuls on the NPU, the rest on the GPU, no note', () => {
    expect(buildPreset('layer-split', config, laptop).note).toBeNull()
    expect(layout('layer-split', 'decode', laptop)).toMatchObject({ qkv: 'qnn-0', attention: 'dml-0', 'lm-head': 'qnn-0' })
  })

  it('tensor split: prefill by sequence (the static NPU takes half of each chunk), decode by rows', () => {
    // an NPU's static graphs take llm.npu's 256-token chunk
    const { placement, note } = buildPreset('tensor-split', config, laptop, { prefillChunkTokens: 256 })
    expect(note).toBeNull()
    expect(placement.phases.prefill.partitions.map((p) => [p.group, p.by])).toEqual([['qkv', 'sequence'], ['attn-out', 'sequence'], ['ffn', 'sequence'], ['lm-head', 'rows']])
    expect(placement.phases.prefill.partitions[0]).toMatchObject({ devices: ['qnn-0', 'dml-0'], standardLength: 128 })
    expect(placement.phases.decode.partitions.every((p) => p.by === 'rows')).toBe(true)
  })
})

describe('presets on a CPU-only machine', () => {
  const cpuOnly = [device('cpu', 'cpu')]

  it('GPU only and the splits fall back to the CPU and say why', () => {
    expect(buildPreset('gpu', config, cpuOnly).note).toBe('No GPU found, so everything runs on the CPU instead.')
    expect(buildPreset('npu-prefill-gpu-decode', config, cpuOnly).note).toBe('No NPU found, so prefill runs on the CPU instead; no GPU found, so decode runs on the CPU.')
    expect(buildPreset('layer-split', config, cpuOnly).note).toBe('Only one device is ready, so nothing is split.')
    expect(phaseDevices(buildPreset('tensor-split', config, cpuOnly).placement.phases.prefill, config)).toEqual(['cpu'])
  })
})

describe('presets on the devices discovery finds here (probed)', () => {
  it('every preset is valid for the real device list, and without an NPU the note says so', async () => {
    const real = await discoverDevices({ probe: true })
    const hasNpu = real.some((d) => d.kind === 'npu' && d.status === 'ready')
    for (const id of PRESET_IDS.filter((x) => x !== 'auto')) {
      const { placement, note } = buildPreset(id, config, real)
      expect(parsePlacement(JSON.parse(JSON.stringify(placement)), config, real)).toEqual(placement)
      for (const phase of ['prefill', 'decode'] as const) for (const d of phaseDevices(placement.phases[phase], config)) expect(real.find((x) => x.id === d)?.status).toBe('ready')
      if (id === 'npu-prefill-gpu-decode' && !hasNpu) expect(note).toMatch(/^No NPU found, so prefill runs on the .+ instead/)
    }
  }, 60_000)
})
