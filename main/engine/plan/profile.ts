/**
 * @file A device profile: measured times the cost model predicts from. Plain JSON, cached (in SQLite, by
 * the store) per device set and model shape, so `parseProfile` treats it as untrusted.
 *
 * - Per device, per op group: wall time in ms of ONE instance of the group (one layer's, or the final
 *   group's) for a run of `tokens` tokens, sampled at a few lengths (e.g. 1, 16, 64, 256) and
 *   interpolated linearly between them (extrapolated along the last two samples above the largest, held
 *   at the smallest below it). lm-head only ever sees one row (the last position), so it is looked up at
 *   1 token. Attention's dependence on the cached length is not modelled: measure it at a typical one.
 * - Per device, optionally, per matmul group: `partitions`, the wall time of ONE row-partition part holding
 *   `share` of the group's rows (part a of a cut at that ratio; the share after rounding the cut), sampled
 *   like the groups. A part is not `share` of the group's time (a half-width matmul runs at a different
 *   efficiency, and the part's fixed work — norms, residual, launch — does not shrink), so the cost model
 *   predicts a part of share x piecewise-linearly through (0, 0), (share, part), (1, whole group).
 * - Per device: `runOverheadMs`, the fixed cost of one session run (onnxruntime-node charges per call and
 *   per output); paid once per segment or partition part.
 * - Per device pair: the hand-off cost of moving a tensor across a segment boundary, `fixedMs` (the
 *   wake-up/sync) plus `msPerMiB` per MiB moved; `defaultLink` for pairs not measured.
 */
import { LAYER_GROUP_KINDS, type GroupKind } from '../graph'
import type { ModelConfig } from '../model'
import { readArray, readChoice, readInteger, readNumber, readRecord, readString, show, type Fail } from '../../common/reader'
import { MAX_DEVICE_ID_LENGTH } from '../devices'
import { FINAL_GROUPS, MATMUL_GROUPS, type MatmulGroup } from './placement'

/** The Profile format version this build reads and writes. */
export const PROFILE_VERSION = 1
/** Most devices in one profile (a laptop has a handful). */
export const MAX_PROFILE_DEVICES = 32
/** Most timing samples per group (a few sequence lengths are enough). */
export const MAX_PROFILE_SAMPLES = 64
/** Most measured partition parts per device: one per matmul group. */
export const MAX_PROFILE_PARTITIONS = MATMUL_GROUPS.length
/** Most measured device pairs (32 devices, both directions). */
export const MAX_PROFILE_LINKS = MAX_PROFILE_DEVICES * MAX_PROFILE_DEVICES
/** Largest sampled run length (tokens). */
export const MAX_SAMPLE_TOKENS = 1 << 20
/** Largest believable time (ms) of any one measurement: about three hours. */
export const MAX_SAMPLE_MS = 1e7
/** Longest model-shape key (characters). */
export const MAX_MODEL_SHAPE_LENGTH = 256

/** One measurement: `ms` for a run of `tokens` tokens. */
export interface TimingSample {
  readonly tokens: number
  readonly ms: number
}

/** The samples of one op group on one device, ascending by tokens. */
export interface GroupTiming {
  readonly group: GroupKind
  readonly samples: readonly TimingSample[]
}

/** The samples of ONE row-partition part of a matmul group holding `share` of its rows, ascending by tokens. */
export interface PartitionTiming {
  readonly group: MatmulGroup
  /** share of the group's rows (after rounding the cut) the measured part holds, in (0, 1) */
  readonly share: number
  readonly samples: readonly TimingSample[]
}

/** Everything measured on one device. */
export interface DeviceProfile {
  readonly device: string
  /** fixed cost of one session run, ms */
  readonly runOverheadMs: number
  readonly groups: readonly GroupTiming[]
  /** measured partition parts (absent in profiles made before they were measured: parts are then priced linearly) */
  readonly partitions?: readonly PartitionTiming[]
}

/** Cost of handing a tensor from one device to another across a segment boundary. */
export interface LinkCost {
  readonly fixedMs: number
  readonly msPerMiB: number
}

/** A measured hand-off from `from` to `to`. */
export interface LinkProfile extends LinkCost {
  readonly from: string
  readonly to: string
}

/** Measured times for one model shape on this machine's devices (plain JSON, version 1). */
export interface Profile {
  readonly version: typeof PROFILE_VERSION
  /** `modelShapeKey(config)` of the model measured */
  readonly modelShape: string
  readonly devices: readonly DeviceProfile[]
  readonly links: readonly LinkProfile[]
  readonly defaultLink: LinkCost
}

/** A profile that is malformed; `path` names the offending field. */
export class ProfileError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string
  ) {
    super(`device profile ${path}: ${detail}`)
    this.name = 'ProfileError'
  }
}

const fail: Fail = (path, detail) => {
  throw new ProfileError(path, detail)
}

/** What decides op-group times: the shapes, not the weights' values (the cache key for a profile). */
export function modelShapeKey(config: ModelConfig): string {
  const c = config
  return `${c.architecture} dim=${c.dim} hidden=${c.hiddenDim} layers=${c.nLayers} heads=${c.nHeads}/${c.nKvHeads}x${c.headDim} vocab=${c.vocabSize}${c.qkvBias ? ' qkv-bias' : ''}`
}

const GROUP_NAMES: readonly GroupKind[] = [...LAYER_GROUP_KINDS, ...FINAL_GROUPS]

function readLink(path: string, value: unknown): LinkCost {
  const r = readRecord(fail, path, value, ['fixedMs', 'msPerMiB'])
  return { fixedMs: readNumber(fail, `${path}.fixedMs`, r.fixedMs, 0, MAX_SAMPLE_MS), msPerMiB: readNumber(fail, `${path}.msPerMiB`, r.msPerMiB, 0, MAX_SAMPLE_MS) }
}

/** Samples at `path`: at least one, strictly ascending by tokens. */
function readSamples(path: string, value: unknown): TimingSample[] {
  const list = readArray(fail, path, value, MAX_PROFILE_SAMPLES)
  if (list.length === 0) fail(path, 'needs at least one sample')
  const samples = list.map((s, i) => {
    const p = `${path}[${i}]`
    const x = readRecord(fail, p, s, ['tokens', 'ms'])
    return { tokens: readInteger(fail, `${p}.tokens`, x.tokens, 1, MAX_SAMPLE_TOKENS), ms: readNumber(fail, `${p}.ms`, x.ms, 0, MAX_SAMPLE_MS) }
  })
  for (let i = 1; i < samples.length; i++) {
    if (samples[i].tokens <= samples[i - 1].tokens) fail(`${path}[${i}].tokens`, `${samples[i].tokens} must be larger than the previous sample's ${samples[i - 1].tokens}`)
  }
  return samples
}

function readTiming(path: string, value: unknown): GroupTiming {
  const r = readRecord(fail, path, value, ['group', 'samples'])
  return { group: readChoice(fail, `${path}.group`, r.group, GROUP_NAMES), samples: readSamples(`${path}.samples`, r.samples) }
}

/** A device's measured partition parts: one per matmul group at most, each of a group the device has timings of. */
function readPartitions(path: string, value: unknown, groups: readonly GroupTiming[]): PartitionTiming[] {
  const seen = new Set<MatmulGroup>()
  return readArray(fail, path, value, MAX_PROFILE_PARTITIONS).map((v, i) => {
    const p = `${path}[${i}]`
    const r = readRecord(fail, p, v, ['group', 'share', 'samples'])
    const group = readChoice(fail, `${p}.group`, r.group, MATMUL_GROUPS)
    if (seen.has(group)) fail(`${p}.group`, `${group} is listed twice`)
    seen.add(group)
    if (!groups.some((g) => g.group === group)) fail(`${p}.group`, `${group} has no group timing on this device to go with it`)
    const share = readNumber(fail, `${p}.share`, r.share, 0, 1)
    if (share === 0 || share === 1) fail(`${p}.share`, `${share} must be strictly between 0 and 1`)
    return { group, share, samples: readSamples(`${p}.samples`, r.samples) }
  })
}

/** Reads untrusted JSON (e.g. a cached row) into a Profile; throws ProfileError naming the field. */
export function parseProfile(json: unknown): Profile {
  const root = readRecord(fail, '(root)', json, ['version', 'modelShape', 'devices', 'links', 'defaultLink'])
  if (root.version !== PROFILE_VERSION) fail('version', `${show(root.version)} is not supported (this build reads version ${PROFILE_VERSION})`)
  const modelShape = readString(fail, 'modelShape', root.modelShape, MAX_MODEL_SHAPE_LENGTH)
  const devices = readArray(fail, 'devices', root.devices, MAX_PROFILE_DEVICES).map((d, i) => {
    const p = `devices[${i}]`
    const r = readRecord(fail, p, d, ['device', 'runOverheadMs', 'groups'], ['partitions'])
    const groups = readArray(fail, `${p}.groups`, r.groups, GROUP_NAMES.length).map((g, j) => readTiming(`${p}.groups[${j}]`, g))
    const seen = new Set<string>()
    groups.forEach((g, j) => {
      if (seen.has(g.group)) fail(`${p}.groups[${j}].group`, `${g.group} is listed twice`)
      seen.add(g.group)
    })
    const device = readString(fail, `${p}.device`, r.device, MAX_DEVICE_ID_LENGTH)
    const runOverheadMs = readNumber(fail, `${p}.runOverheadMs`, r.runOverheadMs, 0, MAX_SAMPLE_MS)
    // absent stays absent, so a profile round-trips through the cache unchanged
    return r.partitions === undefined ? { device, runOverheadMs, groups } : { device, runOverheadMs, groups, partitions: readPartitions(`${p}.partitions`, r.partitions, groups) }
  })
  const ids = new Set<string>()
  devices.forEach((d, i) => {
    if (ids.has(d.device)) fail(`devices[${i}].device`, `${JSON.stringify(d.device)} is listed twice`)
    ids.add(d.device)
  })
  const links = readArray(fail, 'links', root.links, MAX_PROFILE_LINKS).map((l, i) => {
    const p = `links[${i}]`
    const r = readRecord(fail, p, l, ['from', 'to', 'fixedMs', 'msPerMiB'])
    const cost = readLink(p, { fixedMs: r.fixedMs, msPerMiB: r.msPerMiB })
    return { from: readString(fail, `${p}.from`, r.from, MAX_DEVICE_ID_LENGTH), to: readString(fail, `${p}.to`, r.to, MAX_DEVICE_ID_LENGTH), ...cost }
  })
  return { version: PROFILE_VERSION, modelShape, devices, links, defaultLink: readLink('defaultLink', root.defaultLink) }
}

/** Time at `tokens` from ascending samples: linear between them, along the last two above, flat below. */
export function interpolateMs(samples: readonly TimingSample[], tokens: number): number {
  if (samples.length === 0) return NaN
  if (samples.length === 1 || tokens <= samples[0].tokens) return samples[0].ms
  let i = 1
  while (i < samples.length - 1 && samples[i].tokens < tokens) i++
  const lo = samples[i - 1]
  const hi = samples[i]
  const slope = (hi.ms - lo.ms) / (hi.tokens - lo.tokens)
  return Math.max(0, lo.ms + slope * (tokens - lo.tokens))
}

/** Per profile: device -> group -> tokens -> predicted ms (profiles are immutable data; the solver asks often). */
const MS_MEMO = new WeakMap<Profile, Map<string, Map<GroupKind, Map<number, number | null>>>>()

/** Predicted ms of one instance of `group` on `device` for a run of `tokens`, or null when not profiled. */
export function groupMs(profile: Profile, device: string, group: GroupKind, tokens: number): number | null {
  let memo = MS_MEMO.get(profile)
  if (memo === undefined) MS_MEMO.set(profile, (memo = new Map()))
  let byGroup = memo.get(device)
  if (byGroup === undefined) memo.set(device, (byGroup = new Map()))
  let byTokens = byGroup.get(group)
  if (byTokens === undefined) byGroup.set(group, (byTokens = new Map()))
  const known = byTokens.get(tokens)
  if (known !== undefined) return known
  const timing = profile.devices.find((d) => d.device === device)?.groups.find((g) => g.group === group)
  const ms = timing === undefined ? null : interpolateMs(timing.samples, group === 'lm-head' ? 1 : tokens)
  byTokens.set(tokens, ms)
  return ms
}

/** The hand-off cost from `from` to `to`: measured in that direction, else the other, else the default. */
export function linkCost(profile: Profile, from: string, to: string): LinkCost {
  return profile.links.find((l) => l.from === from && l.to === to) ?? profile.links.find((l) => l.from === to && l.to === from) ?? profile.defaultLink
}

/** Per profile: `device|group` -> tokens -> [measured share, the part's ms at that run length], or null when not measured. */
const PART_MEMO = new WeakMap<Profile, Map<string, Map<number, readonly [number, number] | null>>>()

/** The measured part of `group` on `device` at `tokens` (interpolated like the groups): its share and ms, or null. */
function measuredPart(profile: Profile, device: string, group: MatmulGroup, tokens: number): readonly [number, number] | null {
  let memo = PART_MEMO.get(profile)
  if (memo === undefined) PART_MEMO.set(profile, (memo = new Map()))
  const key = `${device}|${group}`
  let byTokens = memo.get(key)
  if (byTokens === undefined) memo.set(key, (byTokens = new Map()))
  const known = byTokens.get(tokens)
  if (known !== undefined) return known
  const timing = profile.devices.find((d) => d.device === device)?.partitions?.find((p) => p.group === group)
  const part: readonly [number, number] | null = timing === undefined ? null : [timing.share, interpolateMs(timing.samples, group === 'lm-head' ? 1 : tokens)]
  byTokens.set(tokens, part)
  return part
}

/**
 * Predicted ms of one row-partition part holding `share` of `group`'s rows on `device` for a run of
 * `tokens`, or null when the group is not profiled there. With a measured part (share s, time T_s) it is
 * piecewise linear through (0, 0), (s, T_s), (1, T_all); without one, share · T_all.
 */
export function partMs(profile: Profile, device: string, group: MatmulGroup, share: number, tokens: number): number | null {
  const whole = groupMs(profile, device, group, tokens)
  if (whole === null) return null
  const part = measuredPart(profile, device, group, tokens)
  if (part === null) return share * whole
  const [s, ms] = part
  return share <= s ? (share / s) * ms : ms + ((share - s) / (1 - s)) * (whole - ms)
}
