/**
 * @file The placement choice as it crosses the boundary and sits in settings: a preset name, or a custom
 * Placement JSON. A custom one gets the engine's model-free check (`parsePlacementShape`: exact keys, types,
 * names, limits) plus the size limit of the contract; whether it can run a given model on this machine's
 * devices is the engine's `parsePlacement`, which the devices service applies on top whenever a model is available.
 */
import { API_LIMITS, type PlacementJson, type PlacementSetting, type PresetName } from '../../preload/api'
import { parsePlacementShape, PlacementError, PRESET_IDS, type PresetId } from '../engine'
import { readChoice, readRecord } from '../common/reader'
import { failInvalid, invalid } from './errors'

/** The presets the setting accepts: the engine's PRESET_IDS, typed as the contract's PresetName. */
export const PRESET_NAMES: readonly PresetName[] = PRESET_IDS
/** True when A and B are the same union. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
/** Compile-time check: the contract's preset names and the engine's preset ids are the same set. */
export const PRESET_NAMES_MATCH_ENGINE: Same<PresetId, PresetName> = true

/** The choice until the user makes one: everything on the CPU (the fast single-session path). */
export const DEFAULT_PLACEMENT_SETTING: PlacementSetting = Object.freeze({ preset: 'cpu' })

/** A Placement JSON with the right shape, names and limits (not yet checked against a model or devices). */
export function placementJson(value: unknown, field = 'placement'): PlacementJson {
  let placement: PlacementJson
  try {
    // the engine's Placement is structurally a PlacementJson, so the compiler checks that the two agree
    placement = parsePlacementShape(value)
  } catch (e) {
    if (!(e instanceof PlacementError)) throw e
    throw invalid(`${e.path === '(root)' ? field : `${field}.${e.path}`}: ${e.detail}`)
  }
  const chars = JSON.stringify(placement).length
  if (chars > API_LIMITS.maxPlacementChars) throw invalid(`${field} is ${chars} characters as JSON; the limit is ${API_LIMITS.maxPlacementChars}`)
  return placement
}

/** A placement choice: `{ preset }` with a known preset, or `{ preset: 'custom', placement }`. */
export function placementSetting(value: unknown, field = 'setting'): PlacementSetting {
  const preset = readRecord(failInvalid, field, value, ['preset'], ['placement']).preset
  if (preset === 'custom') {
    const o = readRecord(failInvalid, field, value, ['preset', 'placement'])
    return { preset, placement: placementJson(o.placement, `${field}.placement`) }
  }
  readRecord(failInvalid, field, value, ['preset'])
  return { preset: readChoice(failInvalid, `${field}.preset`, preset, PRESET_NAMES) }
}
