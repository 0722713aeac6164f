import { describe, expect, it } from 'vitest'
import { GraphTooLargeError, MAX_PROTO_BYTES } from '../../main/engine/graph'
import { GraphBuilder } from '../../main/engine/graph/onnx-builder'
import { modelOpGroups, segmentSpec, wholeModelSegment } from '../../main/engine/graph'
import { randomModel } from './random-model'

describe('graph builder', () => {
  it('refuses weights past the 2 GiB protobuf limit with a clear error', () => {
    const b = new GraphBuilder('big')
    // the builder keeps references, so one 256 MiB buffer added repeatedly reaches the limit cheaply
    const chunk = new Uint8Array(256 * 1024 ** 2)
    const adds = Math.floor(MAX_PROTO_BYTES / chunk.length)
    for (let i = 0; i < adds; i++) b.initializer(`w${i}`, 'uint8', [chunk.length], chunk)
    expect(() => b.initializer('one_more', 'uint8', [chunk.length], chunk)).toThrow(GraphTooLargeError)
    expect(() => b.initializer('one_more', 'uint8', [chunk.length], chunk)).toThrow(/2 GiB/)
  })

  it('makes node and value names unique', () => {
    const b = new GraphBuilder('g')
    expect(b.uniqueName('x')).toBe('x')
    expect(b.uniqueName('x')).toBe('x_2')
    expect(b.uniqueName('x')).toBe('x_3')
  })
})

describe('op groups and segments', () => {
  const { config } = randomModel({ seed: 1, nLayers: 3 })

  it('lists 7 groups per layer plus final norm and lm head, in order', () => {
    const groups = modelOpGroups(config)
    expect(groups).toHaveLength(3 * 7 + 2)
    expect(groups.slice(0, 7).map((g) => g.kind)).toEqual(['attn-norm', 'qkv', 'rope', 'attention', 'attn-out', 'ffn-norm', 'ffn'])
    expect(groups.at(-1)?.kind).toBe('lm-head')
  })

  it('the whole model reads hidden, positions and past K/V, and returns logits and new K/V', () => {
    const spec = wholeModelSegment(config)
    expect(new Set(spec.inputs)).toEqual(new Set(['hidden', 'positions', 'past_k_0', 'past_v_0', 'past_k_1', 'past_v_1', 'past_k_2', 'past_v_2']))
    expect(new Set(spec.outputs)).toEqual(new Set(['logits', 'new_k_0', 'new_v_0', 'new_k_1', 'new_v_1', 'new_k_2', 'new_v_2']))
  })

  it('a cut between layers passes the residual stream across the boundary', () => {
    const all = modelOpGroups(config)
    const first = segmentSpec(config, all.slice(0, 7), all)
    const rest = segmentSpec(config, all.slice(7), all)
    expect(first.outputs).toContain('resid_0')
    expect(rest.inputs).toContain('resid_0')
    expect(first.inputs).not.toContain('resid_0')
    // a cut inside a layer exposes the attention-residual too
    const head = segmentSpec(config, all.slice(0, 5), all)
    expect(head.outputs).toEqual(expect.arrayContaining(['resid_attn_0', 'new_k_0', 'new_v_0']))
  })
})
