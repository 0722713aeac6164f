/**
 * @file placementToSegments: one segment for a single-device phase (exactly the whole-model spec), the
 * expected alternation for a layer split, two parts and a join per partition — and the run segments of a
 * layer split, compiled by the graph compiler as they are and chained on the CPU, compute the logits the
 * whole-model graph computes.
 */
import { describe, expect, it } from 'vitest'
import { createSession, float32Tensor, int64Tensor, tensorFloat32Data, type OrtSession, type OrtTensor } from '../../main/engine/devices'
import { compileModel, compileSegment, KV_OUTPUT, kvOutputValues, wholeModelSegment } from '../../main/engine/graph'
import { tensorToFloat32 } from '../../main/engine/model'
import { buildPreset, parsePlacement, placementToSegments, type PartitionSegment, type Placement, type PlanSegment, type RowSlice } from '../../main/engine/plan'
import { randomModel } from '../graph/random-model'
import { testConfig, thisMachine } from './fixtures'

const config = testConfig()
const devices = thisMachine()

function placement(prefill: unknown, decode: unknown = { device: 'cpu' }): Placement {
  return parsePlacement({ version: 1, name: 't', prefillChunkTokens: 64, phases: { prefill, decode } }, config, devices)
}

const kinds = (s: PlanSegment): string[] => (s.kind === 'run' ? s.spec.groups.map((g) => g.kind) : [s.group])

describe('placementToSegments', () => {
  it('all on one device: exactly one segment, the whole-model spec', () => {
    const p = placement({ device: 'webgpu-0' })
    for (const phase of ['prefill', 'decode'] as const) {
      const segments = placementToSegments(p, phase, config)
      expect(segments).toHaveLength(1)
      const [only] = segments
      expect(only.kind).toBe('run')
      if (only.kind !== 'run') return
      expect(only.device).toBe(phase === 'prefill' ? 'webgpu-0' : 'cpu')
      expect(only.spec).toEqual(wholeModelSegment(config))
    }
  })

  it('layer split: matmuls and the rest alternate, 6 segments per layer plus final-norm and lm-head', () => {
    const { placement: p } = buildPreset('layer-split', config, devices)
    const segments = placementToSegments(p, 'decode', config)
    expect(segments).toHaveLength(6 * config.nLayers + 2)
    const perLayer = [['attn-norm'], ['qkv'], ['rope', 'attention'], ['attn-out'], ['ffn-norm'], ['ffn']]
    const layerDevices = ['cpu', 'webgpu-0', 'cpu', 'webgpu-0', 'cpu', 'webgpu-0']
    for (let l = 0; l < config.nLayers; l++) {
      const layer = segments.slice(6 * l, 6 * l + 6)
      expect(layer.map(kinds)).toEqual(perLayer)
      expect(layer.map((s) => (s.kind === 'run' ? s.device : ''))).toEqual(layerDevices)
    }
    expect(segments.slice(-2).map(kinds)).toEqual([['final-norm'], ['lm-head']])
    expect(segments.slice(-2).map((s) => (s.kind === 'run' ? s.device : ''))).toEqual(['cpu', 'webgpu-0'])
    // boundaries: rope+attention reads q, k, v from the qkv segment and the cache from the runtime
    const ropeAttn = segments[2]
    expect(ropeAttn.kind === 'run' && new Set(ropeAttn.spec.inputs)).toEqual(new Set(['q_0', 'k_0', 'new_v_0', 'positions', 'past_k_0', 'past_v_0']))
    expect(ropeAttn.kind === 'run' && ropeAttn.spec.outputs).toEqual(['new_k_0', 'attn_0'])
    // consecutive segments never share a device
    const deviceOf = (s: PlanSegment): string => (s.kind === 'run' ? s.device : s.parts[0].device)
    for (let i = 1; i < segments.length; i++) expect(deviceOf(segments[i])).not.toBe(deviceOf(segments[i - 1]))
  })

  it('a row partition yields two parts whose weight slices tile the weights, and a join per output', () => {
    const p = placement({
      device: 'cpu',
      partitions: [
        { layer: 1, group: 'qkv', by: 'rows', devices: ['webgpu-0', 'cpu'], ratio: 0.25 },
        { layer: 1, group: 'ffn', by: 'rows', devices: ['webgpu-0', 'cpu'], ratio: 0.5 },
        { layer: 'final', group: 'lm-head', by: 'rows', devices: ['cpu', 'webgpu-0'], ratio: 0.75 }
      ]
    })
    const segments = placementToSegments(p, 'prefill', config)
    // run (layer 0 .. layer 1 attn-norm), qkv partition, run (rope .. ffn-norm), ffn partition, run (layer 2 .. final-norm), lm-head partition
    expect(segments.map((s) => s.kind)).toEqual(['run', 'partition', 'run', 'partition', 'run', 'partition'])
    const parts = segments.filter((s): s is PartitionSegment => s.kind === 'partition')
    const [qkv, ffn, head] = parts
    expect(qkv.spec.inputs).toEqual(['attn_in_1'])
    expect(qkv.parts.map((x) => x.device)).toEqual(['webgpu-0', 'cpu'])
    const slice = (s: PartitionSegment, i: number): RowSlice => {
      const x = s.parts[i].slice
      if (x.by !== 'rows') throw new Error('expected rows')
      return x
    }
    expect(slice(qkv, 0).weights).toEqual([
      { weight: 'wq', axis: 0, start: 0, end: 16 },
      { weight: 'wk', axis: 0, start: 0, end: 8 },
      { weight: 'wv', axis: 0, start: 0, end: 8 }
    ])
    expect(slice(qkv, 1).outputs).toEqual([
      { value: 'q_1', start: 16, end: 64 },
      { value: 'k_1', start: 8, end: 32 },
      { value: 'new_v_1', start: 8, end: 32 }
    ])
    expect(qkv.joins).toEqual([
      { value: 'q_1', op: 'concat', axis: 2 },
      { value: 'k_1', op: 'concat', axis: 2 },
      { value: 'new_v_1', op: 'concat', axis: 2 }
    ])
    // ffn: hidden units split (w_down by columns), partial sums added, the residual added once
    expect(slice(ffn, 0).weights.map((w) => [w.weight, w.axis, w.start, w.end])).toEqual([['wGate', 0, 0, 86], ['wUp', 0, 0, 86], ['wDown', 1, 0, 86]])
    expect([slice(ffn, 0).residual, slice(ffn, 1).residual]).toEqual(['whole', 'none'])
    expect(ffn.joins).toEqual([{ value: 'resid_1', op: 'sum' }])
    expect(slice(head, 1).weights).toEqual([{ weight: 'output', axis: 0, start: 384, end: 512 }])
    expect(head.joins).toEqual([{ value: 'logits', op: 'concat', axis: 1 }])
  })

  it('an ffn cut falls on 32-wide quantization blocks when the hidden width allows', () => {
    const c = testConfig({ hiddenDim: 256 })
    const p = parsePlacement({ version: 1, name: 't', prefillChunkTokens: 64, phases: { prefill: { device: 'cpu' }, decode: { device: 'cpu', partitions: [{ layer: 0, group: 'ffn', by: 'rows', devices: ['cpu', 'webgpu-0'], ratio: 0.3 }] } } }, c, devices)
    const part = placementToSegments(p, 'decode', c).find((s): s is PartitionSegment => s.kind === 'partition')
    expect(part?.parts[0].slice).toMatchObject({ weights: [{ end: 64 }, { end: 64 }, { end: 64 }] })
  })

  it('a sequence partition: the standard length on devices[0], the rest on devices[1], joined along tokens', () => {
    const p = placement({ device: 'cpu', partitions: [{ layer: 'all', group: 'attn-out', by: 'sequence', devices: ['webgpu-0', 'cpu'], standardLength: 48 }] })
    const parts = placementToSegments(p, 'prefill', config).filter((s): s is PartitionSegment => s.kind === 'partition')
    expect(parts).toHaveLength(config.nLayers)
    expect(parts[0].spec.inputs).toEqual(['attn_0', 'hidden'])
    expect(parts[0].parts).toEqual([
      { device: 'webgpu-0', slice: { by: 'sequence', tokenStart: 0, tokenCount: 48 } },
      { device: 'cpu', slice: { by: 'sequence', tokenStart: 48, tokenCount: null } }
    ])
    expect(parts[0].joins).toEqual([{ value: 'resid_attn_0', op: 'concat', axis: 1 }])
  })

  it('the run segments of a layer split compile as they are and chain to the whole graph’s logits', async () => {
    const model = randomModel({ seed: 7, nLayers: 2 })
    const c = model.config
    const p = parsePlacement(
      { version: 1, name: 'split', prefillChunkTokens: 8, phases: { prefill: { device: 'cpu', groups: [{ layer: 'all', group: 'qkv', device: 'cpu-2' }, { layer: 'all', group: 'ffn', device: 'cpu-2' }, { layer: 'final', group: 'lm-head', device: 'cpu-2' }] }, decode: { device: 'cpu' } } },
      c,
      devices
    )
    const segments = placementToSegments(p, 'prefill', c)
    expect(segments).toHaveLength(4 * c.nLayers + 2)
    const options = { ropeTableLength: 16 }
    const session = { ep: 'cpu', intraOpThreads: 1 }
    const sessions: OrtSession[] = []
    try {
      const S = 3
      const cap = 4
      const emb = tensorToFloat32(model.weights.tokenEmbedding)
      const hidden = new Float32Array(S * c.dim)
      ;[5, 9, 2].forEach((t, i) => hidden.set(emb.subarray(t * c.dim, (t + 1) * c.dim), i * c.dim))
      const runtime = (): Record<string, OrtTensor> => {
        const values: Record<string, OrtTensor> = { hidden: float32Tensor(hidden, [1, S, c.dim]), positions: int64Tensor(BigInt64Array.of(0n, 1n, 2n), [S]) }
        for (let l = 0; l < c.nLayers; l++) {
          values[`past_k_${l}`] = float32Tensor(new Float32Array(c.nKvHeads * c.headDim * cap), [c.nKvHeads, c.headDim, cap])
          values[`past_v_${l}`] = float32Tensor(new Float32Array(c.nKvHeads * cap * c.headDim), [c.nKvHeads, cap, c.headDim])
        }
        return values
      }
      const whole = await createSession(compileModel(model, options), session)
      sessions.push(whole)
      const want = tensorFloat32Data((await whole.run(runtime())).logits, 'logits')
      const values = runtime()
      for (const s of segments) {
        if (s.kind !== 'run') throw new Error('no partitions here')
        const sess = await createSession(compileSegment(model, s.spec, options), session)
        sessions.push(sess)
        const out = await sess.run(Object.fromEntries(s.spec.inputs.map((name) => [name, values[name]])))
        const kv = kvOutputValues(s.spec)
        for (const name of s.spec.outputs) if (!kv.includes(name)) values[name] = out[name]
        // new K/V rows leave packed in KV_OUTPUT [count, S, nKv·hd], even when a later segment reads one
        // (v from qkv into attention): unpack them as the runtime would
        const packed = kv.length > 0 ? tensorFloat32Data(out[KV_OUTPUT], KV_OUTPUT) : new Float32Array(0)
        const rowLength = S * c.nKvHeads * c.headDim
        kv.forEach((name, i) => (values[name] = float32Tensor(packed.slice(i * rowLength, (i + 1) * rowLength), [1, S, c.nKvHeads * c.headDim])))
      }
      const got = tensorFloat32Data(values.logits, 'logits')
      expect(got.length).toBe(want.length)
      for (let i = 0; i < want.length; i++) expect(Math.abs(got[i] - want[i])).toBeLessThan(1e-4)
    } finally {
      await Promise.all(sessions.map((s) => s.release()))
    }
  })
})
