/**
 * @file Choosing devices by kind without measurements (for presets), spreading op groups over a preferred
 * device with fallbacks for what its contract refuses, and naming devices in notes and explanations.
 */
import type { DeviceInfo, DeviceKind } from '../devices'
import type { GroupKind } from '../graph'
import type { ModelConfig } from '../model'
import { groupRefusal, type WeightInfo } from './contract'
import { FINAL_GROUPS, OP_GROUP_NAMES, PlacementError, type GroupOverride, type PhasePlacement } from './placement'

/** GPU kinds, best first: a discrete GPU, then an integrated one, then a GPU API emulated on the CPU. */
export const GPU_KINDS: readonly DeviceKind[] = ['dgpu', 'igpu', 'software-gpu']

/** The first ready device of the first kind in `kinds` that has one (list order within a kind), or null. */
export function pickByKind(devices: readonly DeviceInfo[], kinds: readonly DeviceKind[], exclude: readonly string[] = []): DeviceInfo | null {
  for (const kind of kinds) {
    const d = devices.find((x) => x.kind === kind && x.status === 'ready' && !exclude.includes(x.id))
    if (d !== undefined) return d
  }
  return null
}

/** The ready CPU device (discovery always lists one); throws when there is none. */
export function readyCpu(devices: readonly DeviceInfo[]): DeviceInfo {
  const cpu = pickByKind(devices, ['cpu'])
  if (cpu === null) throw new PlacementError('', `no ready CPU device among ${devices.map((d) => `${d.id} (${d.status})`).join(', ') || 'none'}`)
  return cpu
}

const KIND_LABEL: Readonly<Record<DeviceKind, string>> = Object.freeze({ cpu: 'CPU', igpu: 'integrated GPU', dgpu: 'GPU', npu: 'NPU', 'software-gpu': 'software GPU' })

/** A short name for notes: "CPU", "software GPU", or "CPU (cpu-2)" when another ready device has the same kind. */
export function deviceLabel(id: string, devices: readonly DeviceInfo[]): string {
  const d = devices.find((x) => x.id === id)
  if (d === undefined) return id
  const twin = devices.some((x) => x.id !== id && x.kind === d.kind && x.status === 'ready')
  return twin ? `${KIND_LABEL[d.kind]} (${id})` : KIND_LABEL[d.kind]
}

/** True when the two devices compete for the same compute (listed in either's sharesComputeWith). */
export function sharesCompute(a: DeviceInfo, b: DeviceInfo): boolean {
  return a.sharesComputeWith.includes(b.id) || b.sharesComputeWith.includes(a.id)
}

/** A phase built by `spread`, with the groups that did not get their wished device. */
export interface Spread {
  readonly phase: PhasePlacement
  /** group -> the device it went to instead of the wished one */
  readonly moved: ReadonlyArray<{ readonly group: GroupKind; readonly device: string }>
}

/**
 * Puts every group kind on `wish(kind)`, or on the first of `fallbacks` that can take it; the device most
 * groups use becomes the default and the rest are 'all'/'final' overrides. Throws when no device takes a group.
 */
export function spread(config: ModelConfig, weights: WeightInfo, wish: (kind: GroupKind) => DeviceInfo, fallbacks: readonly DeviceInfo[]): Spread {
  const chosen = new Map<GroupKind, string>()
  const moved: Array<{ group: GroupKind; device: string }> = []
  for (const kind of OP_GROUP_NAMES) {
    const wanted = wish(kind)
    const taker = [wanted, ...fallbacks].find((d) => groupRefusal(d, kind, config, weights) === null)
    if (taker === undefined) throw new PlacementError('', `no device can take ${kind}: ${groupRefusal(wanted, kind, config, weights)}`)
    chosen.set(kind, taker.id)
    if (taker.id !== wanted.id) moved.push({ group: kind, device: taker.id })
  }
  const counts = new Map<string, number>()
  for (const id of chosen.values()) counts.set(id, (counts.get(id) ?? 0) + 1)
  let device = ''
  for (const [id, n] of counts) if (n > (counts.get(device) ?? 0)) device = id
  const groups: GroupOverride[] = []
  for (const [kind, id] of chosen) if (id !== device) groups.push({ layer: FINAL_GROUPS.includes(kind) ? 'final' : 'all', group: kind, device: id })
  return { phase: { device, groups, partitions: [] }, moved }
}

/** "norms, rope and attention" style list. */
export function listWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join('')
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`
}

/** Joins clauses into one sentence: first letter capitalised, "; " between, a full stop at the end. */
export function sentence(clauses: readonly string[]): string | null {
  const text = clauses.filter((c) => c.length > 0).join('; ')
  return text.length === 0 ? null : `${text[0].toUpperCase()}${text.slice(1)}.`
}
