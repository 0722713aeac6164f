/**
 * @file What deviceSetupOf makes of shadow outlier execution: in a shadowed layer each matmul group runs alone on its
 * device, with its shadow graph on the phase's shadow device and a sum join after (ffn: the gate/up shadow before,
 * feeding the ffn graph, and the down shadow after its SwiGLU output); other layers keep their runs; a partitioned
 * shadowed group is refused. Pure planning: nothing runs.
 */
import { describe, expect, it } from 'vitest'
import type { Placement } from '../../main/engine/plan'
import { deviceSetupOf } from '../../main/engine/runtime/hetero/device-setup'
import { buildForwardDag } from '../../main/engine/runtime/hetero/forward-dag'
import { testConfig } from '../plan/fixtures'

const config = testConfig()
/** the integer device: its groups run W8A8 */
const NPU: ReadonlySet<string> = new Set(['npu'])

/** Matmuls and norms on 'npu', rope and attention on 'cpu' (the NPU preset's shape), in both phases. */
function npuLike(extra: Partial<Placement['phases']['prefill']> = {}): Placement {
  const phase = {
    device: 'npu',
    groups: [
      { layer: 'all' as const, group: 'rope' as const, device: 'cpu' },
      { layer: 'all' as const, group: 'attention' as const, device: 'cpu' }
    ],
    partitions: [],
    ...extra
  }
  return { version: 1, name: 't', prefillChunkTokens: 32, phases: { prefill: phase, decode: phase } }
}

describe('shadow segments in the device setup', () => {
  it('isolates the shadowed layer’s matmul groups and adds their shadows and joins on the shadow device, in DAG order', () => {
    const setup = deviceSetupOf(npuLike(), config, new Set(['npu']), { w8a8Devices: NPU, layers: new Set([0]), hot: { 'blk.0.attn_q.weight': [1, 2] } })
    const labels = setup.phases.prefill.map((s) => s.label)
    const at = (re: RegExp): number => labels.findIndex((l) => re.test(l))
    // layer 0: qkv alone on the NPU, then its shadow and the three joins on the CPU (where attention runs)
    expect(labels[at(/prefill layer 0 qkv on npu$/) + 1]).toBe('prefill layer 0 qkv shadow on cpu')
    expect(labels.filter((l) => /^prefill layer 0 (q_0|k_0|new_v_0) \+ shadow on cpu$/.test(l))).toHaveLength(3)
    expect(at(/layer 0 new_v_0 \+ shadow/)).toBeLessThan(at(/layer 0 attention on cpu/))
    // ffn: the gate/up shadow first (its corrections are an input of the NPU's ffn), the down shadow after
    const ffn = setup.phases.prefill[at(/prefill layer 0 ffn on npu$/)]
    expect(ffn.reads).toContain('ffn_corr_0')
    expect(ffn.writes).toEqual(expect.arrayContaining(['resid_0', 'ffn_h_0']))
    expect(at(/layer 0 ffn-up shadow on cpu/)).toBeLessThan(at(/prefill layer 0 ffn on npu$/))
    expect(setup.phases.prefill[at(/layer 0 ffn-down shadow on cpu/)].reads).toEqual(['ffn_h_0'])
    expect(setup.phases.prefill[at(/layer 0 ffn-down shadow on cpu/)].writes).toEqual(['resid_0~partial'])
    // layer 1 has no shadow: its norm and matmul groups stay one run
    expect(labels.some((l) => /shadow/.test(l) && /layer 1/.test(l))).toBe(false)
    expect(labels).toContain('prefill layer 1 attn-norm … layer 1 qkv on npu')
    // one shadow graph per stage, on the CPU, dynamic (the NPU's are static)
    const shadows = setup.sessions.filter((s) => s.shadow !== null)
    expect(shadows.map((s) => s.shadow?.stage).sort()).toEqual(['attn-out', 'ffn-down', 'ffn-up', 'qkv'])
    expect(shadows.every((s) => s.device === 'cpu' && s.staticRows === null)).toBe(true)
    // the DAG lets the NPU's next chunk run while the CPU does this chunk's shadow: the shadow depends on nothing of chunk 1
    const dag = buildForwardDag(setup.phases.prefill, [32, 32])
    const shadowTask = dag.tasks.findIndex((t) => t.chunk === 0 && t.label === 'prefill layer 0 qkv shadow on cpu')
    const nextQkv = dag.tasks.findIndex((t) => t.chunk === 1 && t.label === 'prefill layer 0 qkv on npu')
    expect(dag.tasks[nextQkv].deps).not.toContain(shadowTask)
  })

  it('a named shadow device takes the shadows; no shadow layers change nothing; a partitioned shadowed group is refused', () => {
    const named = deviceSetupOf(npuLike({ shadow: 'cpu-2' }), config, new Set(), { w8a8Devices: NPU, layers: new Set([1]), hot: {} })
    expect(named.phases.decode.filter((s) => /shadow/.test(s.label)).every((s) => s.device === 'cpu-2')).toBe(true)
    expect(named.devices).toContain('cpu-2')
    // a group on a float device has nothing clipped to repair: the CPU-only decode of a shadow layer has no shadow
    const cpuDecode: Placement = { ...npuLike(), phases: { prefill: npuLike().phases.prefill, decode: { device: 'cpu', groups: [], partitions: [] } } }
    const decodeLabels = deviceSetupOf(cpuDecode, config, new Set(['npu']), { w8a8Devices: NPU, layers: new Set([0]), hot: {} }).phases.decode.map((s) => s.label)
    expect(decodeLabels.some((l) => /shadow/.test(l))).toBe(false)
    const none = deviceSetupOf(npuLike(), config, new Set(), { w8a8Devices: NPU, layers: new Set(), hot: {} })
    expect(none.phases.prefill.map((s) => s.label)).toEqual(deviceSetupOf(npuLike(), config).phases.prefill.map((s) => s.label))
    const split = npuLike({ partitions: [{ layer: 0, group: 'ffn', by: 'rows', devices: ['npu', 'cpu'], ratio: 0.5 }] })
    expect(() => deviceSetupOf(split, config, new Set(), { w8a8Devices: NPU, layers: new Set([0]), hot: {} })).toThrow(/layer 0 ffn is partitioned; shadow outlier execution needs it whole/)
  })
})
