/**
 * @file The placement choice as it crosses the boundary and sits in settings: a preset name, or a custom
 * Placement JSON. This is the structural check only (exact keys, types, names, limits), which needs no
 * model; whether a custom placement can run a given model on this machine's devices is the engine's
 * `parsePlacement`, which the devices service applies on top whenever a model is available.
 */
import { API_LIMITS, type PlacementJson, type PlacementLayerRef, type PlacementPhaseJson, type PlacementSetting, type PresetName } from '../../preload/api'
import {
  MATMUL_GROUPS,
  MAX_DEVICE_ID_LENGTH,
  MAX_PHASE_ENTRIES,
  MAX_PLACEMENT_NAME_LENGTH,
  MAX_PREFILL_CHUNK_TOKENS,
  OP_GROUP_NAMES,
  PLACEMENT_VERSION,
  PRESET_IDS,
  type PresetId
} from '../engine'
import { invalid } from './errors'

/** The presets the setting accepts: the engine's PRESET_IDS, typed as the contract's PresetName. */
export const PRESET_NAMES: readonly PresetName[] = PRESET_IDS
/** True when A and B are the same union. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
/** Compile-time check: the contract's preset names and the engine's preset ids are the same set. */
export const PRESET_NAMES_MATCH_ENGINE: Same<PresetId, PresetName> = true

/** The choice until the user makes one: everything on the CPU (the fast single-session path). */
export const DEFAULT_PLACEMENT_SETTING: PlacementSetting = Object.freeze({ preset: 'cpu' })

/** Largest layer index a placement may name (far beyond any real model; the model check is exact). */
const MAX_LAYER_INDEX = 100_000

/** An object with exactly the `required` keys (plus `optional` ones), so a typo is an error. */
function record(value: unknown, field: string, required: readonly string[], optional: readonly string[] = []): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`${field} must be an object`)
  for (const key of Object.keys(value)) {
    if (!required.includes(key) && !optional.includes(key)) throw invalid(`${field} has an unknown field "${key.slice(0, 50)}"`)
  }
  const o: Record<string, unknown> = { ...value }
  for (const key of required) if (!Object.hasOwn(o, key)) throw invalid(`${field}.${key} is missing`)
  return o
}

function nonEmpty(value: unknown, field: string, maxChars: number): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid(`${field} must be a non-empty string`)
  if (value.length > maxChars) throw invalid(`${field} is ${value.length} characters long; the limit is ${maxChars}`)
  return value
}

function integerIn(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw invalid(`${field} must be an integer from ${min} to ${max}`)
  return value
}

function choice<T extends string>(value: unknown, field: string, choices: readonly T[]): T {
  const found = choices.find((c) => c === value)
  if (found === undefined) throw invalid(`${field} must be one of ${choices.join(', ')}`)
  return found
}

function list(value: unknown, field: string): readonly unknown[] {
  if (!Array.isArray(value)) throw invalid(`${field} must be an array`)
  if (value.length > MAX_PHASE_ENTRIES) throw invalid(`${field} has ${value.length} entries; the limit is ${MAX_PHASE_ENTRIES}`)
  return value
}

function layerRef(value: unknown, field: string): PlacementLayerRef {
  if (value === 'all' || value === 'final') return value
  return integerIn(value, field, 0, MAX_LAYER_INDEX)
}

function deviceId(value: unknown, field: string): string {
  return nonEmpty(value, field, MAX_DEVICE_ID_LENGTH)
}

function phase(value: unknown, field: string, chunk: number): PlacementPhaseJson {
  const o = record(value, field, ['device', 'groups', 'partitions'])
  const groups = list(o.groups, `${field}.groups`).map((g, i) => {
    const f = `${field}.groups[${i}]`
    const e = record(g, f, ['layer', 'group', 'device'])
    return { layer: layerRef(e.layer, `${f}.layer`), group: choice(e.group, `${f}.group`, OP_GROUP_NAMES), device: deviceId(e.device, `${f}.device`) }
  })
  const partitions = list(o.partitions, `${field}.partitions`).map((p, i): PlacementPhaseJson['partitions'][number] => {
    const f = `${field}.partitions[${i}]`
    const by = record(p, f, ['by'], ['layer', 'group', 'devices', 'ratio', 'standardLength']).by
    const e = record(p, f, ['layer', 'group', 'by', 'devices', by === 'rows' ? 'ratio' : 'standardLength'])
    const pair = e.devices
    if (!Array.isArray(pair) || pair.length !== 2) throw invalid(`${f}.devices must be two device ids`)
    const devices: [string, string] = [deviceId(pair[0], `${f}.devices[0]`), deviceId(pair[1], `${f}.devices[1]`)]
    if (devices[0] === devices[1]) throw invalid(`${f}.devices must name two different devices`)
    const head = { layer: layerRef(e.layer, `${f}.layer`), group: choice(e.group, `${f}.group`, MATMUL_GROUPS), devices }
    if (by === 'rows') {
      const ratio = e.ratio
      if (typeof ratio !== 'number' || !(ratio > 0 && ratio < 1)) throw invalid(`${f}.ratio must be a number between 0 and 1 (exclusive)`)
      return { ...head, by: 'rows', ratio }
    }
    if (by !== 'sequence') throw invalid(`${f}.by must be "rows" or "sequence"`)
    if (chunk < 2) throw invalid(`${f}: a sequence partition needs prefillChunkTokens of at least 2`)
    return { ...head, by: 'sequence', standardLength: integerIn(e.standardLength, `${f}.standardLength`, 1, chunk - 1) }
  })
  return { device: deviceId(o.device, `${field}.device`), groups, partitions }
}

/** A Placement JSON with the right shape, names and limits (not yet checked against a model or devices). */
export function placementJson(value: unknown, field = 'placement'): PlacementJson {
  const o = record(value, field, ['version', 'name', 'prefillChunkTokens', 'phases'])
  if (o.version !== PLACEMENT_VERSION) throw invalid(`${field}.version must be ${PLACEMENT_VERSION}`)
  const prefillChunkTokens = integerIn(o.prefillChunkTokens, `${field}.prefillChunkTokens`, 1, MAX_PREFILL_CHUNK_TOKENS)
  const phases = record(o.phases, `${field}.phases`, ['prefill', 'decode'])
  const placement: PlacementJson = {
    version: PLACEMENT_VERSION,
    name: nonEmpty(o.name, `${field}.name`, MAX_PLACEMENT_NAME_LENGTH),
    prefillChunkTokens,
    phases: {
      prefill: phase(phases.prefill, `${field}.phases.prefill`, prefillChunkTokens),
      decode: phase(phases.decode, `${field}.phases.decode`, prefillChunkTokens)
    }
  }
  const chars = JSON.stringify(placement).length
  if (chars > API_LIMITS.maxPlacementChars) throw invalid(`${field} is ${chars} characters as JSON; the limit is ${API_LIMITS.maxPlacementChars}`)
  return placement
}

/** A placement choice: `{ preset }` with a known preset, or `{ preset: 'custom', placement }`. */
export function placementSetting(value: unknown, field = 'setting'): PlacementSetting {
  const preset = record(value, field, ['preset'], ['placement']).preset
  if (preset === 'custom') {
    const o = record(value, field, ['preset', 'placement'])
    return { preset, placement: placementJson(o.placement, `${field}.placement`) }
  }
  record(value, field, ['preset'])
  return { preset: choice(preset, `${field}.preset`, PRESET_NAMES) }
}
