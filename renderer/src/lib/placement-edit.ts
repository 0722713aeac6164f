/**
 * @file Editing a custom placement in the settings panel: immutable updates of `PlacementJson` (stage
 * devices, op-group overrides, matmul partitions), the checks the form can make before saving (the app
 * validates again, against the model and the devices), and a plain-words summary of what runs where.
 * Pure, no React, so Vitest runs it.
 *
 * Overrides are ordered and later entries win (plan/placement.ts). The form edits one entry per group for
 * every layer ('all', or 'final' for the groups after the last layer); entries for single layers (written
 * by hand or by the solver) are kept, and kept after the group's 'all' entry so they still win.
 */
import type { PlacementJson, PlacementLayerRef, PlacementPhaseJson } from '../../../preload/api'

/** The two phases of generation. */
export type PhaseName = 'prefill' | 'decode'

/** Both phases, in order. */
export const PHASE_NAMES: readonly PhaseName[] = ['prefill', 'decode']

/** One override entry of a phase. */
export type GroupEntry = PlacementPhaseJson['groups'][number]

/** One partition entry of a phase. */
export type PartitionEntry = PlacementPhaseJson['partitions'][number]

/**
 * The op groups that come after the last layer; their entries use layer 'final'. Mirrors FINAL_GROUPS in
 * main/engine/plan/placement.ts (the renderer cannot import main).
 */
export const FINAL_OP_GROUPS: readonly string[] = ['final-norm', 'lm-head']


/** Name given to placements edited here. */
export const CUSTOM_NAME = 'Custom'

/** The layer reference that means "every instance" of `group`. */
export function everyLayer(group: string): PlacementLayerRef {
  return FINAL_OP_GROUPS.includes(group) ? 'final' : 'all'
}

const isEvery = (layer: PlacementLayerRef): boolean => layer === 'all' || layer === 'final'

/**
 * A custom placement to start editing from: the one running now (renamed), or everything on `fallbackDevice`
 * with the engine's default prefill chunk (PlacementView.prefillChunk).
 */
export function customFrom(resolved: PlacementJson | null, fallbackDevice: string, defaultChunkTokens: number): PlacementJson {
  if (resolved !== null) return { ...resolved, name: CUSTOM_NAME }
  const phase: PlacementPhaseJson = { device: fallbackDevice, groups: [], partitions: [] }
  return { version: 1, name: CUSTOM_NAME, prefillChunkTokens: defaultChunkTokens, phases: { prefill: phase, decode: phase } }
}

function withPhase(p: PlacementJson, phase: PhaseName, change: (ph: PlacementPhaseJson) => PlacementPhaseJson): PlacementJson {
  return { ...p, phases: { ...p.phases, [phase]: change(p.phases[phase]) } }
}

/** Sets a phase's default device; overrides and partitions stay (they say where their groups go instead). */
export function setStageDevice(p: PlacementJson, phase: PhaseName, device: string): PlacementJson {
  return withPhase(p, phase, (ph) => ({ ...ph, device }))
}

/** The device an every-layer override puts `group` on in `phase`, or null when it follows the stage default. */
export function groupDevice(phase: PlacementPhaseJson, group: string): string | null {
  let device: string | null = null
  for (const g of phase.groups) if (g.group === group && isEvery(g.layer)) device = g.device
  return device
}

/**
 * Puts `group` (every layer) on `device`, or back on the stage default (null). Replaces the group's
 * every-layer entries; the new one goes before the group's single-layer entries, so those still win.
 */
export function setGroupDevice(p: PlacementJson, phase: PhaseName, group: string, device: string | null): PlacementJson {
  return withPhase(p, phase, (ph) => {
    const kept = ph.groups.filter((g) => !(g.group === group && isEvery(g.layer)))
    if (device === null) return { ...ph, groups: kept }
    const entry: GroupEntry = { layer: everyLayer(group), group, device }
    const firstSingle = kept.findIndex((g) => g.group === group)
    const groups = firstSingle < 0 ? [...kept, entry] : [...kept.slice(0, firstSingle), entry, ...kept.slice(firstSingle)]
    return { ...ph, groups }
  })
}

/** Overrides for single layers, with their index in `phase.groups` (the form lists them and can remove them). */
export function singleLayerEntries(phase: PlacementPhaseJson): { readonly index: number; readonly entry: GroupEntry }[] {
  return phase.groups.flatMap((entry, index) => (isEvery(entry.layer) ? [] : [{ index, entry }]))
}

/** Removes the override at `index`. */
export function removeGroupEntry(p: PlacementJson, phase: PhaseName, index: number): PlacementJson {
  return withPhase(p, phase, (ph) => ({ ...ph, groups: ph.groups.filter((_, i) => i !== index) }))
}

/** A new partition of `group` between `devices`: by rows, half and half. */
export function newPartition(group: string, devices: readonly [string, string]): PartitionEntry {
  return { layer: everyLayer(group), group, by: 'rows', devices, ratio: 0.5 }
}

/** Appends a partition. */
export function addPartition(p: PlacementJson, phase: PhaseName, partition: PartitionEntry): PlacementJson {
  return withPhase(p, phase, (ph) => ({ ...ph, partitions: [...ph.partitions, partition] }))
}

/** Replaces the partition at `index`. */
export function updatePartition(p: PlacementJson, phase: PhaseName, index: number, partition: PartitionEntry): PlacementJson {
  return withPhase(p, phase, (ph) => ({ ...ph, partitions: ph.partitions.map((x, i) => (i === index ? partition : x)) }))
}

/** Removes the partition at `index`. */
export function removePartition(p: PlacementJson, phase: PhaseName, index: number): PlacementJson {
  return withPhase(p, phase, (ph) => ({ ...ph, partitions: ph.partitions.filter((_, i) => i !== index) }))
}

/**
 * The same partition with another group (its layer follows: 'final' for lm-head), split kind (a sequence
 * split takes half the prefill chunk as its standard length) or devices.
 */
export function reshapePartition(
  part: PartitionEntry,
  change: { readonly group?: string; readonly by?: 'rows' | 'sequence'; readonly devices?: readonly [string, string] },
  prefillChunkTokens: number
): PartitionEntry {
  const group = change.group ?? part.group
  const layer = change.group === undefined || change.group === part.group ? part.layer : everyLayer(group)
  const devices = change.devices ?? part.devices
  const by = change.by ?? part.by
  if (by === 'rows') return { layer, group, by, devices, ratio: part.by === 'rows' ? part.ratio : 0.5 }
  const standardLength = part.by === 'sequence' ? part.standardLength : Math.max(1, Math.floor(prefillChunkTokens / 2))
  return { layer, group, by, devices, standardLength }
}

/** What the form can tell is wrong before asking the app (up to the engine's `maxChunkTokens`); one sentence each, naming the place. */
export function draftProblems(p: PlacementJson, maxChunkTokens: number): string[] {
  const problems: string[] = []
  const chunk = p.prefillChunkTokens
  if (!Number.isInteger(chunk) || chunk < 1 || chunk > maxChunkTokens) {
    problems.push(`The prefill chunk must be a whole number of tokens from 1 to ${maxChunkTokens}.`)
  }
  for (const phase of PHASE_NAMES) {
    const label = phase === 'prefill' ? 'Prefill' : 'Decode'
    p.phases[phase].partitions.forEach((part, i) => {
      const where = `${label} split ${i + 1} (${part.group})`
      if (part.devices[0] === part.devices[1]) problems.push(`${where}: choose two different devices.`)
      if (part.by === 'rows' && !(part.ratio > 0 && part.ratio < 1)) problems.push(`${where}: the share must be between 0% and 100%.`)
      if (part.by === 'sequence') {
        if (phase === 'decode') problems.push(`${where}: decode makes one token per step, so split it by rows.`)
        if (part.group === 'lm-head') problems.push(`${where}: lm-head sees only the last token, so split it by rows.`)
        if (!Number.isInteger(part.standardLength) || part.standardLength < 1 || part.standardLength >= chunk) {
          problems.push(`${where}: the standard length must be a whole number from 1 to ${Math.max(1, chunk - 1)} tokens.`)
        }
      }
    })
  }
  return problems
}

/** JSON with object keys sorted, so two equal placements compare equal whatever order their keys came in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined)
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** True when two placements hold the same JSON (the form's "unsaved changes" test). */
export function samePlacement(a: PlacementJson | null, b: PlacementJson | null): boolean {
  return canonical(a) === canonical(b)
}

/** Which device runs each op group (every layer) in `phase`, after overrides; partitions are separate. */
export function groupDevices(phase: PlacementPhaseJson, opGroups: readonly string[]): Map<string, string> {
  const out = new Map<string, string>()
  for (const group of opGroups) out.set(group, groupDevice(phase, group) ?? phase.device)
  return out
}

/** "ffn split by rows: 60% on A, 40% on B", "qkv split by sequence: the first 128 tokens of each chunk on A, the rest on B". */
export function describePartition(part: PartitionEntry, nameOf: (id: string) => string): string {
  const where = typeof part.layer === 'number' ? ` in layer ${part.layer}` : ''
  const [a, b] = part.devices
  if (part.by === 'rows') {
    const share = Math.round(part.ratio * 100)
    return `${part.group}${where} split by rows: ${share}% on ${nameOf(a)}, ${100 - share}% on ${nameOf(b)}`
  }
  return `${part.group}${where} split by sequence: the first ${part.standardLength} tokens of each chunk on ${nameOf(a)}, the rest on ${nameOf(b)}`
}

/**
 * What runs where in one phase, as short lines: "Everything on CPU", or one line per device with its op
 * groups ("Software GPU: qkv, attn-out, ffn"), then single-layer exceptions and partitions.
 */
export function summarizePhase(phase: PlacementPhaseJson, opGroups: readonly string[], nameOf: (id: string) => string): string[] {
  const lines: string[] = []
  const partitioned = new Set(phase.partitions.filter((x) => isEvery(x.layer)).map((x) => x.group))
  const byDevice = new Map<string, string[]>()
  for (const [group, device] of groupDevices(phase, opGroups)) {
    if (partitioned.has(group)) continue
    byDevice.set(device, [...(byDevice.get(device) ?? []), group])
  }
  if (byDevice.size === 0 && partitioned.size === 0) lines.push(`Everything on ${nameOf(phase.device)}`)
  else if (byDevice.size === 1 && partitioned.size === 0) lines.push(`Everything on ${nameOf([...byDevice.keys()][0] ?? phase.device)}`)
  else for (const [device, groups] of byDevice) lines.push(`${nameOf(device)}: ${groups.join(', ')}`)
  for (const { entry } of singleLayerEntries(phase)) lines.push(`${entry.group} in layer ${String(entry.layer)} on ${nameOf(entry.device)}`)
  for (const part of phase.partitions) lines.push(describePartition(part, nameOf))
  return lines
}
