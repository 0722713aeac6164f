/**
 * @file The model-free half of reading a Placement from untrusted JSON: the shape (exact keys, types, names,
 * limits) and every rule that needs neither a model nor devices (matmul-only partitions, two different
 * devices, ratio and standardLength ranges, sequence splits only in prefill). The services use it alone to
 * check a custom placement when no model is loaded; `parsePlacement` (validate.ts) runs it first, then the
 * model and device checks. Errors name the field.
 */
import type { GroupKind } from '../graph'
import { readArray, readChoice, readInteger, readNumber, readRecord, readString, show, type Fail } from '../../common/reader'
import { MAX_DEVICE_ID_LENGTH } from '../devices'
import {
  FINAL_GROUPS,
  isMatmulGroup,
  MATMUL_GROUPS,
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

/** Largest layer index the shape allows: far beyond any real model; parsePlacement checks the model's count. */
const MAX_LAYER_INDEX = 100_000

const fail: Fail = (path, detail) => {
  throw new PlacementError(path, detail)
}

/**
 * Reads `json` into a Placement with the right shape, names and limits, without a model or devices: layer
 * indexes, device ids and the chunk length are not yet checked against them (parsePlacement does that).
 * Throws PlacementError.
 */
export function parsePlacementShape(json: unknown): Placement {
  const root = readRecord(fail, '(root)', json, ['version', 'name', 'prefillChunkTokens', 'phases'])
  if (root.version !== PLACEMENT_VERSION) fail('version', `${show(root.version)} is not supported (this build reads version ${PLACEMENT_VERSION})`)
  const name = readString(fail, 'name', root.name, MAX_PLACEMENT_NAME_LENGTH)
  const prefillChunkTokens = readInteger(fail, 'prefillChunkTokens', root.prefillChunkTokens, 1, MAX_PREFILL_CHUNK_TOKENS)
  const phases = readRecord(fail, 'phases', root.phases, ['prefill', 'decode'])
  return {
    version: PLACEMENT_VERSION,
    name,
    prefillChunkTokens,
    phases: {
      prefill: readPhase('phases.prefill', phases.prefill, 'prefill', prefillChunkTokens),
      decode: readPhase('phases.decode', phases.decode, 'decode', prefillChunkTokens)
    }
  }
}

function readDeviceId(path: string, value: unknown): string {
  return readString(fail, path, value, MAX_DEVICE_ID_LENGTH)
}

/** A layer reference that fits the group: 'final' for the final groups, a layer index or 'all' otherwise. */
function readLayer(path: string, value: unknown, group: GroupKind): LayerRef {
  if (FINAL_GROUPS.includes(group)) {
    if (value !== 'final') fail(path, `${group} comes after the last layer, so its layer is "final", not ${show(value)}`)
    return 'final'
  }
  if (value === 'all') return 'all'
  if (value === 'final') fail(path, `${group} is a per-layer group; use a layer index or "all"`)
  return readInteger(fail, path, value, 0, MAX_LAYER_INDEX)
}

function readOverride(path: string, value: unknown): GroupOverride {
  const r = readRecord(fail, path, value, ['layer', 'group', 'device'])
  const group = readChoice(fail, `${path}.group`, r.group, OP_GROUP_NAMES)
  const layer = readLayer(`${path}.layer`, r.layer, group)
  const device = readDeviceId(`${path}.device`, r.device)
  return { layer, group, device }
}

/** A partition; `chunk` is the prefill chunk length (tokens) a sequence split divides. */
function readPartition(path: string, value: unknown, phase: Phase, chunk: number): Partition {
  const r = readRecord(fail, path, value, ['layer', 'group', 'by', 'devices'], ['ratio', 'standardLength'])
  const kind = readChoice(fail, `${path}.group`, r.group, OP_GROUP_NAMES)
  if (!isMatmulGroup(kind)) fail(`${path}.group`, `${kind} is not a matmul group; only ${MATMUL_GROUPS.join(', ')} can be partitioned`)
  const layer = readLayer(`${path}.layer`, r.layer, kind)
  const by = readChoice(fail, `${path}.by`, r.by, ['rows', 'sequence'] as const)
  const list = readArray(fail, `${path}.devices`, r.devices, 2)
  if (list.length !== 2) fail(`${path}.devices`, `a partition needs exactly two devices, got ${list.length}`)
  const devices: readonly [string, string] = [readDeviceId(`${path}.devices[0]`, list[0]), readDeviceId(`${path}.devices[1]`, list[1])]
  if (devices[0] === devices[1]) fail(`${path}.devices`, `both parts are on ${JSON.stringify(devices[0])}; a partition needs two different devices`)
  if (by === 'rows') {
    if (r.standardLength !== undefined) fail(`${path}.standardLength`, 'only a "sequence" partition has a standardLength')
    if (r.ratio === undefined) fail(path, 'a "rows" partition needs a ratio (share of the rows on devices[0])')
    const ratio = readNumber(fail, `${path}.ratio`, r.ratio, -Infinity, Infinity)
    if (!(ratio > 0 && ratio < 1)) fail(`${path}.ratio`, `${ratio} is out of range (0, 1): it is the share of the rows on devices[0]`)
    return { layer, group: kind, by, devices, ratio }
  }
  if (r.ratio !== undefined) fail(`${path}.ratio`, 'only a "rows" partition has a ratio')
  if (phase !== 'prefill') fail(`${path}.by`, 'decode runs one token per step, so it cannot be split by sequence; use "rows"')
  if (kind === 'lm-head') fail(`${path}.by`, 'lm-head sees only the last position, so it cannot be split by sequence; use "rows"')
  if (chunk < 2) fail(`${path}.by`, 'a 1-token prefill chunk cannot be split by sequence')
  if (r.standardLength === undefined) fail(path, 'a "sequence" partition needs a standardLength (tokens per chunk on devices[0])')
  const standardLength = readInteger(fail, `${path}.standardLength`, r.standardLength, 1, chunk - 1)
  return { layer, group: kind, by, devices, standardLength }
}

function readPhase(path: string, value: unknown, phase: Phase, chunk: number): PhasePlacement {
  const r = readRecord(fail, path, value, ['device'], ['groups', 'partitions', 'shadow'])
  const device = readDeviceId(`${path}.device`, r.device)
  const groups = readArray(fail, `${path}.groups`, r.groups ?? [], MAX_PHASE_ENTRIES).map((o, i) => readOverride(`${path}.groups[${i}]`, o))
  const partitions = readArray(fail, `${path}.partitions`, r.partitions ?? [], MAX_PHASE_ENTRIES).map((p, i) => readPartition(`${path}.partitions[${i}]`, p, phase, chunk))
  if (r.shadow === undefined) return { device, groups, partitions }
  return { device, groups, partitions, shadow: readDeviceId(`${path}.shadow`, r.shadow) }
}
