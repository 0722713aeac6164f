/**
 * @file parsePlacement: accepts the compact JSON form and round-trips it; rejects every bad case with an
 * error naming the field and saying what is wrong. parsePlacementShape: the same shape rules without a model
 * or devices.
 */
import { describe, expect, it } from 'vitest'
import { assignGroups, parsePlacement, parsePlacementShape, PlacementError, shadowDeviceOf, weightInfoOf, type Placement, type WeightInfo } from '../../main/engine/plan'
import { randomModel } from '../graph/random-model'
import { device, npuLaptop, testConfig, thisMachine } from './fixtures'

const config = testConfig()
const devices = thisMachine()

/** A valid placement to mutate: everything on the CPU, with one override and one partition in prefill. */
function base(): Record<string, unknown> {
  return {
    version: 1,
    name: 'test',
    prefillChunkTokens: 64,
    phases: {
      prefill: {
        device: 'cpu',
        groups: [{ layer: 'all', group: 'qkv', device: 'webgpu-0' }],
        partitions: [{ layer: 2, group: 'ffn', by: 'rows', devices: ['webgpu-0', 'cpu'], ratio: 0.5 }]
      },
      decode: { device: 'cpu' }
    }
  }
}

/** base() with `phase`'s field replaced. */
function withPhase(phase: 'prefill' | 'decode', patch: Record<string, unknown>): Record<string, unknown> {
  const b = base()
  const phases = { prefill: { device: 'cpu' }, decode: { device: 'cpu' }, [phase]: { device: 'cpu', ...patch } }
  return { ...b, phases }
}

function rejects(json: unknown, path: string, message: RegExp, devs = devices, weights?: WeightInfo): void {
  let error: unknown = null
  try {
    parsePlacement(json, config, devs, weights)
  } catch (e) {
    error = e
  }
  expect(error).toBeInstanceOf(PlacementError)
  if (!(error instanceof PlacementError)) return
  expect(error.path).toBe(path)
  expect(error.message).toMatch(message)
}

describe('parsePlacement', () => {
  it('accepts the compact form, fills in empty lists, and round-trips through JSON', () => {
    const p = parsePlacement(base(), config, devices)
    expect(p.phases.decode).toEqual({ device: 'cpu', groups: [], partitions: [] })
    expect(parsePlacement(JSON.parse(JSON.stringify(p)), config, devices)).toEqual(p)
    // overrides and partitions resolve per group: qkv everywhere on the GPU, layer 2's ffn split
    const assigned = assignGroups(p.phases.prefill, config)
    expect(assigned.filter((a) => a.group.kind === 'qkv').every((a) => a.device === 'webgpu-0')).toBe(true)
    expect(assigned.filter((a) => a.partition !== null).map((a) => [a.group.layer, a.group.kind, a.device])).toEqual([[2, 'ffn', 'webgpu-0']])
  })

  it('rejects a wrong shape: not an object, unknown fields, missing fields, another version, bad chunk', () => {
    rejects('cpu', '(root)', /expected an object, got "cpu"/)
    rejects({ ...base(), extra: 1 }, '(root)', /unknown field "extra"/)
    const noName = base()
    delete noName.name
    rejects(noName, '(root)', /missing field "name"/)
    rejects({ ...base(), version: 2 }, 'version', /2 is not supported \(this build reads version 1\)/)
    rejects({ ...base(), prefillChunkTokens: 1024 }, 'prefillChunkTokens', /1024 is out of range \[1, 512\]/)
    rejects({ ...base(), prefillChunkTokens: 2.5 }, 'prefillChunkTokens', /expected an integer/)
    rejects(withPhase('prefill', { groups: [{ layer: 0, group: 'softmax', device: 'cpu' }] }), 'phases.prefill.groups[0].group', /"softmax" is not one of attn-norm/)
  })

  it('places shadow segments on a CPU device: a named one round-trips, absent it is the CPU, a GPU or NPU is refused', () => {
    const named = parsePlacement(withPhase('prefill', { shadow: 'cpu-2' }), config, devices)
    expect(named.phases.prefill.shadow).toBe('cpu-2')
    expect(shadowDeviceOf(named.phases.prefill)).toBe('cpu-2')
    expect(parsePlacement(JSON.parse(JSON.stringify(named)), config, devices)).toEqual(named)
    const plain = parsePlacement(base(), config, devices)
    expect('shadow' in plain.phases.prefill).toBe(false)
    expect(shadowDeviceOf(plain.phases.prefill)).toBe('cpu')
    rejects(withPhase('decode', { shadow: 'qnn-0' }), 'phases.decode.shadow', /unknown device "qnn-0"/)
    rejects(withPhase('decode', { shadow: 'webgpu-0' }), 'phases.decode.shadow', /"webgpu-0" is not a CPU; shadow segments gather the channels that clipped/)
    const staticNpu = [device('cpu', 'cpu'), device('npu-0', 'npu', { contract: { staticShapesOnly: true } })]
    rejects(withPhase('prefill', { shadow: 'npu-0' }), 'phases.prefill.shadow', /"npu-0" is not a CPU/, staticNpu)
  })

  it('rejects an unknown device, listing the devices there are', () => {
    rejects(withPhase('decode', { device: 'qnn-0' }), 'phases.decode.device', /unknown device "qnn-0" \(devices here: cpu, cpu-2, webgpu-0, cuda-0, tensorrt-0\)/)
  })

  it('rejects a device that is not ready, with its status and reason', () => {
    rejects(withPhase('decode', { device: 'cuda-0' }), 'phases.decode.device', /device "cuda-0" is unavailable \(test device is unavailable\), not ready/)
    const failed = [...devices, device('dml-0', 'igpu', { status: 'failed' })]
    rejects(withPhase('prefill', { partitions: [{ layer: 0, group: 'qkv', by: 'rows', devices: ['cpu', 'dml-0'], ratio: 0.5 }] }), 'phases.prefill.partitions[0].devices[1]', /"dml-0" is failed/, failed)
  })

  it("rejects a group the device's contract cannot take, naming the rule and where the device came from", () => {
    const laptop = npuLaptop()
    // an int8-only NPU as the default device: the first group it cannot run is layer 0's attn-norm
    rejects(withPhase('prefill', { device: 'qnn-0' }), 'phases.prefill.device', /layer 0 attn-norm: device "qnn-0" runs only int8 \(QDQ\) graphs/, laptop)
    const staticGpu = [device('cpu', 'cpu'), device('coreml-0', 'npu', { contract: { staticShapesOnly: true } })]
    rejects(withPhase('decode', { groups: [{ layer: 3, group: 'attention', device: 'coreml-0' }] }), 'phases.decode.groups[0]', /layer 3 attention: device "coreml-0" needs static shapes/, staticGpu)
    const noRope = [device('cpu', 'cpu'), device('dml-0', 'igpu', { contract: { supportsContribOps: ['SimplifiedLayerNormalization'] } })]
    rejects(withPhase('decode', { groups: [{ layer: 'all', group: 'rope', device: 'dml-0' }] }), 'phases.decode.groups[0]', /does not support RotaryEmbedding, which rope needs/, noRope)
    // a quantized model's matmuls need MatMulNBits
    const q4: WeightInfo = { quantized: true, bitsPerWeight: 4.5 }
    rejects(withPhase('decode', { groups: [{ layer: 'final', group: 'lm-head', device: 'dml-0' }] }), 'phases.decode.groups[0]', /does not support MatMulNBits, which lm-head needs/, noRope, q4)
  })

  it('checks tensor limits against the weights as compiled, and only a part of them for a partition', () => {
    const big = testConfig({ dim: 1536, vocabSize: 151936, nHeads: 12, nKvHeads: 2, headDim: 128, hiddenDim: 8960 })
    const onGpu = withPhase('decode', { groups: [{ layer: 'final', group: 'lm-head', device: 'webgpu-0' }] })
    expect(() => parsePlacement(onGpu, big, devices)).toThrow(/lm-head's largest weight \(890\.3 MiB\) exceeds device "webgpu-0"'s tensor limit of 128\.0 MiB/)
    // Q4 blocks: 4.5 bits per weight fit in one binding
    expect(parsePlacement(onGpu, big, devices, { quantized: true, bitsPerWeight: 4.5 }).phases.decode.groups).toHaveLength(1)
    const part = (ratio: number): unknown => withPhase('decode', { partitions: [{ layer: 'final', group: 'lm-head', by: 'rows', devices: ['webgpu-0', 'cpu'], ratio }] })
    expect(parsePlacement(part(0.1), big, devices).phases.decode.partitions[0]).toMatchObject({ ratio: 0.1 })
    expect(() => parsePlacement(part(0.5), big, devices)).toThrow(/partitions\[0\]\.devices\[0\]: lm-head's largest weight \(445\.1 MiB for this part\)/)
  })

  it('rejects ratios out of range or too fine for the weights', () => {
    const part = (ratio: unknown): unknown => withPhase('decode', { partitions: [{ layer: 1, group: 'attn-out', by: 'rows', devices: ['cpu', 'webgpu-0'], ratio }] })
    for (const ratio of [1.5, 1, 0, -0.1]) rejects(part(ratio), 'phases.decode.partitions[0].ratio', new RegExp(`${ratio} is out of range \\(0, 1\\): it is the share of the rows on devices\\[0\\]`))
    rejects(part(Number.NaN), 'phases.decode.partitions[0].ratio', /expected a finite number/)
    rejects(part('half'), 'phases.decode.partitions[0].ratio', /expected a finite number, got "half"/)
    // wk has 32 rows: 0.01 of them rounds to none
    const fine = withPhase('decode', { partitions: [{ layer: 1, group: 'qkv', by: 'rows', devices: ['cpu', 'webgpu-0'], ratio: 0.01 }] })
    rejects(fine, 'phases.decode.partitions[0].ratio', /ratio 0\.01 leaves the first device no rows of wk \(32 rows\)/)
  })

  it('rejects a partition on a non-matmul group, and other malformed partitions', () => {
    const p = (entry: Record<string, unknown>, phase: 'prefill' | 'decode' = 'prefill'): unknown => withPhase(phase, { partitions: [{ layer: 0, group: 'qkv', by: 'rows', devices: ['cpu', 'webgpu-0'], ratio: 0.5, ...entry }] })
    rejects(p({ group: 'rope' }), 'phases.prefill.partitions[0].group', /rope is not a matmul group; only qkv, attn-out, ffn, lm-head can be partitioned/)
    rejects(p({ devices: ['cpu', 'cpu'] }), 'phases.prefill.partitions[0].devices', /both parts are on "cpu"/)
    rejects(p({ devices: ['cpu'] }), 'phases.prefill.partitions[0].devices', /exactly two devices, got 1/)
    rejects(p({ layer: 5 }), 'phases.prefill.partitions[0].layer', /5 is out of range \[0, 4\]/)
    rejects(p({ layer: 'final' }), 'phases.prefill.partitions[0].layer', /qkv is a per-layer group; use a layer index or "all"/)
    rejects(p({ group: 'lm-head', layer: 0 }), 'phases.prefill.partitions[0].layer', /lm-head comes after the last layer, so its layer is "final", not 0/)
    rejects(p({ standardLength: 16 }), 'phases.prefill.partitions[0].standardLength', /only a "sequence" partition has a standardLength/)
    rejects(p({ by: 'sequence', standardLength: 16 }), 'phases.prefill.partitions[0].ratio', /only a "rows" partition has a ratio/)
    const seq = (entry: Record<string, unknown>, phase: 'prefill' | 'decode' = 'prefill'): unknown => withPhase(phase, { partitions: [{ layer: 0, group: 'ffn', by: 'sequence', devices: ['cpu', 'webgpu-0'], standardLength: 16, ...entry }] })
    expect(parsePlacement(seq({}), config, devices).phases.prefill.partitions[0]).toMatchObject({ by: 'sequence', standardLength: 16 })
    rejects(seq({}, 'decode'), 'phases.decode.partitions[0].by', /decode runs one token per step, so it cannot be split by sequence/)
    rejects(seq({ group: 'lm-head', layer: 'final' }), 'phases.prefill.partitions[0].by', /lm-head sees only the last position/)
    rejects(seq({ standardLength: 64 }), 'phases.prefill.partitions[0].standardLength', /64 is out of range \[1, 63\]/)
    const laptop = npuLaptop()
    rejects(seq({ devices: ['dml-0', 'qnn-0'] }), 'phases.prefill.partitions[0].devices[1]', /"qnn-0" needs static shapes, but the remainder of a chunk varies in length/, laptop)
    const twice = withPhase('prefill', {
      partitions: [
        { layer: 'all', group: 'ffn', by: 'rows', devices: ['cpu', 'webgpu-0'], ratio: 0.5 },
        { layer: 3, group: 'ffn', by: 'rows', devices: ['webgpu-0', 'cpu'], ratio: 0.25 }
      ]
    })
    rejects(twice, 'phases.prefill.partitions[1]', /3 ffn is already partitioned by phases\.prefill\.partitions\[0\]/)
  })

  it('reads the weight format of a real in-memory model (Q4_0 matmuls need MatMulNBits)', () => {
    const q4 = randomModel({ seed: 3, nLayers: 1, encoding: 'q4_0' })
    expect(weightInfoOf(q4.weights)).toEqual({ quantized: true, bitsPerWeight: 4.5 })
    expect(weightInfoOf(randomModel({ seed: 3, nLayers: 1 }).weights)).toEqual({ quantized: false, bitsPerWeight: 32 })
  })

  it('returns a fresh, exactly typed object (no stray fields survive)', () => {
    const p: Placement = parsePlacement(base(), config, devices)
    expect(Object.keys(p)).toEqual(['version', 'name', 'prefillChunkTokens', 'phases'])
    expect(Object.keys(p.phases.prefill.partitions[0])).toEqual(['layer', 'group', 'by', 'devices', 'ratio'])
  })
})

describe('parsePlacementShape', () => {
  function shapeError(json: unknown): PlacementError {
    try {
      parsePlacementShape(json)
    } catch (e) {
      if (e instanceof PlacementError) return e
      throw e
    }
    throw new Error('expected a PlacementError')
  }

  it('reads a valid placement without a model, to the same value parsePlacement gives', () => {
    expect(parsePlacementShape(base())).toEqual(parsePlacement(base(), config, devices))
  })

  it('rejects bad shapes, naming the path', () => {
    const bad: Array<[unknown, string, RegExp]> = [
      [{ ...base(), version: 2 }, 'version', /2 is not supported/],
      [{ ...base(), prefillChunkTokens: 8193 }, 'prefillChunkTokens', /8193 is out of range \[1, 8192\]/],
      [withPhase('decode', { device: '' }), 'phases.decode.device', /expected a non-empty string/],
      [withPhase('decode', { groups: [{ layer: -1, group: 'qkv', device: 'cpu' }] }), 'phases.decode.groups[0].layer', /-1 is out of range \[0, /],
      [withPhase('decode', { groups: [{ layer: 0, group: 'final-norm', device: 'cpu' }] }), 'phases.decode.groups[0].layer', /final-norm comes after the last layer/],
      [withPhase('decode', { partitions: [{ layer: 0, group: 'rope', by: 'rows', devices: ['a', 'b'], ratio: 0.5 }] }), 'phases.decode.partitions[0].group', /rope is not a matmul group/],
      [withPhase('decode', { partitions: [{ layer: 0, group: 'ffn', by: 'rows', devices: ['a', 'a'], ratio: 0.5 }] }), 'phases.decode.partitions[0].devices', /both parts are on "a"/],
      [withPhase('decode', { partitions: [{ layer: 0, group: 'ffn', by: 'rows', devices: ['a', 'b'], ratio: 1 }] }), 'phases.decode.partitions[0].ratio', /1 is out of range \(0, 1\)/],
      [withPhase('decode', { partitions: [{ layer: 0, group: 'ffn', by: 'sequence', devices: ['a', 'b'], standardLength: 8 }] }), 'phases.decode.partitions[0].by', /decode runs one token per step/],
      [withPhase('prefill', { partitions: [{ layer: 0, group: 'ffn', by: 'sequence', devices: ['a', 'b'], standardLength: 64 }] }), 'phases.prefill.partitions[0].standardLength', /64 is out of range \[1, 63\]/]
    ]
    for (const [json, path, message] of bad) {
      const error = shapeError(json)
      expect(error.path).toBe(path)
      expect(error.message).toMatch(message)
      expect(error.message).toContain(path)
    }
  })

  it('leaves devices and layer counts to parsePlacement', () => {
    const elsewhere = withPhase('prefill', {
      device: 'npu-9',
      groups: [{ layer: 40, group: 'qkv', device: 'qnn-0' }],
      partitions: [{ layer: 'all', group: 'ffn', by: 'rows', devices: ['npu-9', 'qnn-0'], ratio: 0.5 }]
    })
    const shape = parsePlacementShape(elsewhere)
    expect(shape.phases.prefill).toMatchObject({ device: 'npu-9', groups: [{ layer: 40, device: 'qnn-0' }] })
    rejects(elsewhere, 'phases.prefill.device', /unknown device "npu-9"/)
    rejects(withPhase('prefill', { groups: [{ layer: 40, group: 'qkv', device: 'cpu' }] }), 'phases.prefill.groups[0].layer', /40 is out of range \[0, 4\]/)
  })
})
