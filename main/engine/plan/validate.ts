/**
 * @file The strict reader from untrusted JSON (a settings file, the UI, an HTTP body) to a Placement that
 * can run on this model and these devices. It checks the shape (exact keys, types, limits), then the
 * meaning: every device exists and is ready, every group lands on a device whose contract takes it, and
 * every partition splits a matmul group in a way both devices can run. Errors name the field.
 */
import type { DeviceInfo } from '../devices'
import { modelOpGroups, type GroupKind } from '../graph'
import type { ModelConfig } from '../model'
import { deviceRefusal, FLOAT32_WEIGHTS, groupRefusal, type WeightInfo } from './contract'
import { readArray, readChoice, readInteger, readNumber, readRecord, readString, show, type Fail } from './json'
import {
  FINAL_GROUPS,
  isMatmulGroup,
  layerMatches,
  MATMUL_GROUPS,
  MAX_DEVICE_ID_LENGTH,
  MAX_PHASE_ENTRIES,
  MAX_PLACEMENT_NAME_LENGTH,
  MAX_PREFILL_CHUNK_TOKENS,
  OP_GROUP_NAMES,
  PLACEMENT_VERSION,
  PlacementError,
  type GroupOverride,
  type LayerRef,
  type Partition,
  type Phase,
  type PhasePlacement,
  type Placement
} from './placement'
import { rowCuts, rowShareOf } from './rows'

const fail: Fail = (path, detail) => {
  throw new PlacementError(path, detail)
}

/** What every check of one placement needs. */
interface Ctx {
  readonly config: ModelConfig
  readonly devices: readonly DeviceInfo[]
  readonly weights: WeightInfo
  readonly prefillChunkTokens: number
}

/**
 * Reads `json` into a Placement valid for `config` on `devices` (the quantization of the weights decides
 * whether matmuls need MatMulNBits and how big they are; float32 when not given). Throws PlacementError.
 */
export function parsePlacement(json: unknown, config: ModelConfig, devices: readonly DeviceInfo[], weights: WeightInfo = FLOAT32_WEIGHTS): Placement {
  const root = readRecord(fail, '(root)', json, ['version', 'name', 'prefillChunkTokens', 'phases'])
  if (root.version !== PLACEMENT_VERSION) fail('version', `${show(root.version)} is not supported (this build reads version ${PLACEMENT_VERSION})`)
  const name = readString(fail, 'name', root.name, MAX_PLACEMENT_NAME_LENGTH)
  const maxChunk = Math.min(MAX_PREFILL_CHUNK_TOKENS, config.contextLength)
  const prefillChunkTokens = readInteger(fail, 'prefillChunkTokens', root.prefillChunkTokens, 1, maxChunk)
  const phases = readRecord(fail, 'phases', root.phases, ['prefill', 'decode'])
  const ctx: Ctx = { config, devices, weights, prefillChunkTokens }
  return {
    version: PLACEMENT_VERSION,
    name,
    prefillChunkTokens,
    phases: { prefill: readPhase('phases.prefill', phases.prefill, 'prefill', ctx), decode: readPhase('phases.decode', phases.decode, 'decode', ctx) }
  }
}

/** A device id that exists on this machine and is ready. */
function readDevice(path: string, value: unknown, ctx: Ctx): DeviceInfo {
  const id = readString(fail, path, value, MAX_DEVICE_ID_LENGTH)
  const device = ctx.devices.find((d) => d.id === id)
  if (device === undefined) fail(path, `unknown device ${JSON.stringify(id)} (devices here: ${ctx.devices.map((d) => d.id).join(', ') || 'none'})`)
  const refusal = deviceRefusal(device)
  if (refusal !== null) fail(path, refusal)
  return device
}

/** A layer reference that fits the group: 'final' for the final groups, a layer index or 'all' otherwise. */
function readLayer(path: string, value: unknown, group: GroupKind, config: ModelConfig): LayerRef {
  if (FINAL_GROUPS.includes(group)) {
    if (value !== 'final') fail(path, `${group} comes after the last layer, so its layer is "final", not ${show(value)}`)
    return 'final'
  }
  if (value === 'all') return 'all'
  if (value === 'final') fail(path, `${group} is a per-layer group; use a layer index or "all"`)
  return readInteger(fail, path, value, 0, config.nLayers - 1)
}

function readOverride(path: string, value: unknown, ctx: Ctx): GroupOverride {
  const r = readRecord(fail, path, value, ['layer', 'group', 'device'])
  const group = readChoice(fail, `${path}.group`, r.group, OP_GROUP_NAMES)
  const layer = readLayer(`${path}.layer`, r.layer, group, ctx.config)
  const device = readDevice(`${path}.device`, r.device, ctx).id
  return { layer, group, device }
}

function readPartition(path: string, value: unknown, phase: Phase, ctx: Ctx): Partition {
  const r = readRecord(fail, path, value, ['layer', 'group', 'by', 'devices'], ['ratio', 'standardLength'])
  const kind = readChoice(fail, `${path}.group`, r.group, OP_GROUP_NAMES)
  if (!isMatmulGroup(kind)) fail(`${path}.group`, `${kind} is not a matmul group; only ${MATMUL_GROUPS.join(', ')} can be partitioned`)
  const layer = readLayer(`${path}.layer`, r.layer, kind, ctx.config)
  const by = readChoice(fail, `${path}.by`, r.by, ['rows', 'sequence'] as const)
  const list = readArray(fail, `${path}.devices`, r.devices, 2)
  if (list.length !== 2) fail(`${path}.devices`, `a partition needs exactly two devices, got ${list.length}`)
  const a = readDevice(`${path}.devices[0]`, list[0], ctx)
  const b = readDevice(`${path}.devices[1]`, list[1], ctx)
  if (a.id === b.id) fail(`${path}.devices`, `both parts are on ${JSON.stringify(a.id)}; a partition needs two different devices`)
  const devices: readonly [string, string] = [a.id, b.id]
  if (by === 'rows') {
    if (r.standardLength !== undefined) fail(`${path}.standardLength`, 'only a "sequence" partition has a standardLength')
    if (r.ratio === undefined) fail(path, 'a "rows" partition needs a ratio (share of the rows on devices[0])')
    const ratio = readNumber(fail, `${path}.ratio`, r.ratio, -Infinity, Infinity)
    if (!(ratio > 0 && ratio < 1)) fail(`${path}.ratio`, `${ratio} is out of range (0, 1): it is the share of the rows on devices[0]`)
    const cuts = rowCuts(kind, ratio, ctx.config)
    if (typeof cuts === 'string') fail(`${path}.ratio`, cuts)
    const share = rowShareOf(cuts)
    checkGroup(`${path}.devices[0]`, a, kind, ctx, share)
    checkGroup(`${path}.devices[1]`, b, kind, ctx, 1 - share)
    return { layer, group: kind, by, devices, ratio }
  }
  if (r.ratio !== undefined) fail(`${path}.ratio`, 'only a "rows" partition has a ratio')
  if (phase !== 'prefill') fail(`${path}.by`, 'decode runs one token per step, so it cannot be split by sequence; use "rows"')
  if (kind === 'lm-head') fail(`${path}.by`, 'lm-head sees only the last position, so it cannot be split by sequence; use "rows"')
  if (ctx.prefillChunkTokens < 2) fail(`${path}.by`, 'a 1-token prefill chunk cannot be split by sequence')
  if (r.standardLength === undefined) fail(path, 'a "sequence" partition needs a standardLength (tokens per chunk on devices[0])')
  const standardLength = readInteger(fail, `${path}.standardLength`, r.standardLength, 1, ctx.prefillChunkTokens - 1)
  // devices[1] takes whatever is left of each chunk, a length that varies
  if (b.contract.staticShapesOnly) fail(`${path}.devices[1]`, `device ${JSON.stringify(b.id)} needs static shapes, but the remainder of a chunk varies in length; put it first`)
  checkGroup(`${path}.devices[0]`, a, kind, ctx, 1)
  checkGroup(`${path}.devices[1]`, b, kind, ctx, 1)
  return { layer, group: kind, by, devices, standardLength }
}

function checkGroup(path: string, device: DeviceInfo, kind: GroupKind, ctx: Ctx, rowShare = 1): void {
  const refusal = groupRefusal(device, kind, ctx.config, ctx.weights, rowShare)
  if (refusal !== null) fail(path, refusal)
}

/** Instances (`layer:kind`) a layer reference covers. */
function instances(ref: LayerRef, kind: GroupKind, config: ModelConfig): string[] {
  if (ref === 'final') return [`final:${kind}`]
  if (ref === 'all') return Array.from({ length: config.nLayers }, (_, l) => `${l}:${kind}`)
  return [`${ref}:${kind}`]
}

function readPhase(path: string, value: unknown, phase: Phase, ctx: Ctx): PhasePlacement {
  const r = readRecord(fail, path, value, ['device'], ['groups', 'partitions'])
  const device = readDevice(`${path}.device`, r.device, ctx).id
  const groups = readArray(fail, `${path}.groups`, r.groups ?? [], MAX_PHASE_ENTRIES).map((o, i) => readOverride(`${path}.groups[${i}]`, o, ctx))
  const partitions = readArray(fail, `${path}.partitions`, r.partitions ?? [], MAX_PHASE_ENTRIES).map((p, i) => readPartition(`${path}.partitions[${i}]`, p, phase, ctx))
  const claimed = new Map<string, number>()
  partitions.forEach((p, i) => {
    for (const key of instances(p.layer, p.group, ctx.config)) {
      const first = claimed.get(key)
      if (first !== undefined) fail(`${path}.partitions[${i}]`, `${key.replace(':', ' ')} is already partitioned by ${path}.partitions[${first}]`)
      claimed.set(key, i)
    }
  })
  // every unpartitioned group must be runnable where the default and the overrides put it
  for (const group of modelOpGroups(ctx.config)) {
    if (partitions.some((p) => p.group === group.kind && layerMatches(p.layer, group))) continue
    let source = `${path}.device`
    let id = device
    groups.forEach((o, i) => {
      if (o.group === group.kind && layerMatches(o.layer, group)) {
        source = `${path}.groups[${i}]`
        id = o.device
      }
    })
    const target = ctx.devices.find((d) => d.id === id)
    if (target === undefined) fail(source, `unknown device ${JSON.stringify(id)}`)
    const refusal = groupRefusal(target, group.kind, ctx.config, ctx.weights)
    if (refusal !== null) fail(source, `${group.layer === null ? 'final' : `layer ${group.layer}`} ${group.kind}: ${refusal}`)
  }
  return { device, groups, partitions }
}
