/**
 * @file The settings panel's placement editing (pure renderer code), checked against the engine's own
 * validator: every edit the form can make to a real preset placement, on this machine's device list and a
 * stories260K-shaped model, is a placement `parsePlacement` accepts and that puts the groups where the form
 * says; the form's own checks catch what the validator would refuse; the summary says what runs where.
 */
import { describe, expect, it } from 'vitest'
import type { PlacementJson } from '../../preload/api'
import { assignGroups, buildPreset, defaultPrefillChunkTokens, FINAL_GROUPS, maxPrefillChunkTokens, OP_GROUP_NAMES, parsePlacement, PlacementError, type Placement } from '../../main/engine/plan'
import {
  addPartition,
  customFrom,
  draftProblems,
  FINAL_OP_GROUPS,
  groupDevice,
  newPartition,
  removeGroupEntry,
  removePartition,
  reshapePartition,
  samePlacement,
  setGroupDevice,
  setStageDevice,
  singleLayerEntries,
  summarizePhase,
  updatePartition
} from '../../renderer/src/lib/placement-edit'
import { testConfig, thisMachine } from '../plan/fixtures'

const config = testConfig()
const devices = thisMachine()
const opGroups = [...OP_GROUP_NAMES]
/** what the app's PlacementView says for this model */
const DEFAULT_CHUNK = defaultPrefillChunkTokens(config)
const MAX_CHUNK = maxPrefillChunkTokens(config)
const names: Record<string, string> = { cpu: 'CPU', 'cpu-2': 'CPU worker 2', 'webgpu-0': 'Software GPU' }
const nameOf = (id: string): string => names[id] ?? id

/** The engine's reading of a placement the form produced (throws PlacementError when it would refuse it). */
function accept(p: PlacementJson): Placement {
  return parsePlacement(JSON.parse(JSON.stringify(p)), config, devices)
}

/** Device of each group kind in layer 0 (or the final groups) in a phase, as the engine assigns it. */
function devicesByGroup(p: Placement, phase: 'prefill' | 'decode'): Map<string, string> {
  const out = new Map<string, string>()
  for (const a of assignGroups(p.phases[phase], config)) if (a.group.layer === null || a.group.layer === 0) out.set(a.group.kind, a.device)
  return out
}

describe('placement editing', () => {
  it('knows the same final groups as the engine', () => {
    expect([...FINAL_OP_GROUPS]).toEqual([...FINAL_GROUPS])
  })

  it('starts from the resolved placement (renamed Custom), or everything on one device without one', () => {
    const layer = buildPreset('layer-split', config, devices).placement
    const draft = customFrom(layer, 'cpu', DEFAULT_CHUNK)
    expect(draft.name).toBe('Custom')
    expect(draft.phases).toEqual(layer.phases)
    const blank = customFrom(null, 'cpu', DEFAULT_CHUNK)
    expect(accept(blank).phases.decode.device).toBe('cpu')
    expect(blank.prefillChunkTokens).toBe(DEFAULT_CHUNK)
  })

  it('stage devices: prefill on the software GPU, decode on the CPU', () => {
    let p = customFrom(buildPreset('cpu', config, devices).placement, 'cpu', DEFAULT_CHUNK)
    p = setStageDevice(p, 'prefill', 'webgpu-0')
    const parsed = accept(p)
    expect(new Set(devicesByGroup(parsed, 'prefill').values())).toEqual(new Set(['webgpu-0']))
    expect(new Set(devicesByGroup(parsed, 'decode').values())).toEqual(new Set(['cpu']))
    expect(summarizePhase(p.phases.prefill, opGroups, nameOf)).toEqual(['Everything on Software GPU'])
  })

  it('op-group overrides: every layer or the final groups, back to the default, single-layer entries still win', () => {
    let p = customFrom(buildPreset('cpu', config, devices).placement, 'cpu', DEFAULT_CHUNK)
    p = setGroupDevice(p, 'decode', 'ffn', 'webgpu-0')
    p = setGroupDevice(p, 'decode', 'lm-head', 'webgpu-0')
    expect(p.phases.decode.groups).toEqual([
      { layer: 'all', group: 'ffn', device: 'webgpu-0' },
      { layer: 'final', group: 'lm-head', device: 'webgpu-0' }
    ])
    let parsed = accept(p)
    expect(devicesByGroup(parsed, 'decode').get('ffn')).toBe('webgpu-0')
    expect(devicesByGroup(parsed, 'decode').get('lm-head')).toBe('webgpu-0')
    expect(devicesByGroup(parsed, 'decode').get('qkv')).toBe('cpu')
    expect(groupDevice(p.phases.decode, 'ffn')).toBe('webgpu-0')
    expect(summarizePhase(p.phases.decode, opGroups, nameOf)).toEqual([
      'CPU: attn-norm, qkv, rope, attention, attn-out, ffn-norm, final-norm',
      'Software GPU: ffn, lm-head'
    ])

    // a hand-written single-layer entry keeps winning when the every-layer entry changes
    p = { ...p, phases: { ...p.phases, decode: { ...p.phases.decode, groups: [...p.phases.decode.groups, { layer: 2, group: 'ffn', device: 'cpu-2' }] } } }
    p = setGroupDevice(p, 'decode', 'ffn', 'cpu')
    expect(p.phases.decode.groups.map((g) => `${String(g.layer)}:${g.group}:${g.device}`)).toEqual(['final:lm-head:webgpu-0', 'all:ffn:cpu', '2:ffn:cpu-2'])
    parsed = accept(p)
    const layer2 = assignGroups(parsed.phases.decode, config).find((a) => a.group.layer === 2 && a.group.kind === 'ffn')
    expect(layer2?.device).toBe('cpu-2')
    expect(singleLayerEntries(p.phases.decode).map((e) => e.index)).toEqual([2])
    expect(summarizePhase(p.phases.decode, opGroups, nameOf)).toContain('ffn in layer 2 on CPU worker 2')

    p = removeGroupEntry(p, 'decode', 2)
    p = setGroupDevice(p, 'decode', 'lm-head', null)
    expect(groupDevice(p.phases.decode, 'lm-head')).toBeNull()
    expect(summarizePhase(accept(p).phases.decode, opGroups, nameOf)).toEqual(['Everything on CPU'])
  })

  it('partitions: rows with a ratio, sequence with a standard length, reshaped and removed', () => {
    let p = customFrom(buildPreset('cpu', config, devices).placement, 'cpu', DEFAULT_CHUNK)
    p = addPartition(p, 'decode', newPartition('ffn', ['webgpu-0', 'cpu']))
    p = addPartition(p, 'prefill', newPartition('lm-head', ['webgpu-0', 'cpu']))
    expect(p.phases.prefill.partitions[0]?.layer).toBe('final')
    const seq = reshapePartition(newPartition('qkv', ['webgpu-0', 'cpu']), { by: 'sequence' }, p.prefillChunkTokens)
    expect(seq).toEqual({ layer: 'all', group: 'qkv', by: 'sequence', devices: ['webgpu-0', 'cpu'], standardLength: Math.floor(p.prefillChunkTokens / 2) })
    p = addPartition(p, 'prefill', seq)
    p = updatePartition(p, 'decode', 0, { layer: 'all', group: 'ffn', by: 'rows', devices: ['webgpu-0', 'cpu'], ratio: 0.75 })
    expect(draftProblems(p, MAX_CHUNK)).toEqual([])
    const parsed = accept(p)
    expect(parsed.phases.decode.partitions).toEqual([{ layer: 'all', group: 'ffn', by: 'rows', devices: ['webgpu-0', 'cpu'], ratio: 0.75 }])
    expect(summarizePhase(p.phases.decode, opGroups, nameOf)).toEqual([
      'CPU: attn-norm, qkv, rope, attention, attn-out, ffn-norm, final-norm, lm-head',
      'ffn split by rows: 75% on Software GPU, 25% on CPU'
    ])
    expect(summarizePhase(p.phases.prefill, opGroups, nameOf).at(-1)).toBe(
      `qkv split by sequence: the first ${seq.by === 'sequence' ? seq.standardLength : 0} tokens of each chunk on Software GPU, the rest on CPU`
    )
    // switching the group to lm-head moves the entry to layer 'final'; back to rows keeps it valid
    const moved = reshapePartition(seq, { group: 'lm-head', by: 'rows' }, p.prefillChunkTokens)
    expect(moved).toMatchObject({ layer: 'final', group: 'lm-head', by: 'rows', ratio: 0.5 })
    p = removePartition(p, 'prefill', 1)
    expect(accept(p).phases.prefill.partitions).toHaveLength(1)
  })

  it('the form catches what the validator refuses: same device twice, sequence in decode or on lm-head, bad lengths', () => {
    const base = customFrom(buildPreset('cpu', config, devices).placement, 'cpu', DEFAULT_CHUNK)
    const cases: PlacementJson[] = [
      addPartition(base, 'decode', newPartition('ffn', ['cpu', 'cpu'])),
      addPartition(base, 'decode', reshapePartition(newPartition('ffn', ['webgpu-0', 'cpu']), { by: 'sequence' }, base.prefillChunkTokens)),
      addPartition(base, 'prefill', { layer: 'final', group: 'lm-head', by: 'sequence', devices: ['webgpu-0', 'cpu'], standardLength: 8 }),
      addPartition(base, 'prefill', { layer: 'all', group: 'qkv', by: 'sequence', devices: ['webgpu-0', 'cpu'], standardLength: base.prefillChunkTokens }),
      addPartition(base, 'prefill', { layer: 'all', group: 'qkv', by: 'rows', devices: ['webgpu-0', 'cpu'], ratio: 1 }),
      { ...base, prefillChunkTokens: 0 }
    ]
    for (const draft of cases) {
      expect(draftProblems(draft, MAX_CHUNK)).not.toEqual([])
      expect(() => accept(draft)).toThrow(PlacementError)
    }
  })

  it('compares placements by content', () => {
    const a = buildPreset('cpu', config, devices).placement
    expect(samePlacement(a, JSON.parse(JSON.stringify(a)))).toBe(true)
    expect(samePlacement(a, setStageDevice(a, 'decode', 'webgpu-0'))).toBe(false)
    expect(samePlacement(null, null)).toBe(true)
    // the app may answer with the keys in another order
    const reordered: PlacementJson = { phases: { decode: a.phases.decode, prefill: a.phases.prefill }, prefillChunkTokens: a.prefillChunkTokens, name: a.name, version: 1 }
    expect(samePlacement(a, reordered)).toBe(true)
  })
})
