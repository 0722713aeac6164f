/**
 * @file What a placement choice means for one model on this machine's devices: a preset built by the
 * engine's planner (with its fallback note), Auto solved from a measured profile (with its explanation and
 * predicted speed), or a custom placement checked by `parsePlacement`. Pure: the devices service supplies
 * the model's shape, the devices and the profile.
 */
import type { PlacementSetting } from '../../preload/api'
import {
  buildPreset,
  parsePlacement,
  planAuto,
  PRESET_LABELS,
  type DeviceInfo,
  type ModelConfig,
  type Placement,
  type Profile,
  type WeightInfo
} from '../engine'
import { errorMessage } from './errors'

/** The model a placement is resolved for (header facts only). */
export interface PlacementModel {
  /** display name, for messages */
  readonly name: string
  readonly config: ModelConfig
  readonly weights: WeightInfo
}

/** Predicted speed of a placement (Auto only). */
export interface PredictedSpeed {
  readonly prefillTokensPerSec: number
  readonly decodeTokensPerSec: number
}

/** A choice resolved for one model: what runs, why it looks like it does, and Auto's prediction. */
export interface Resolution {
  /** null when the choice cannot run this model here (`explanation` says why) */
  readonly placement: Placement | null
  readonly explanation: string | null
  readonly predicted: PredictedSpeed | null
}

/** Auto's profile state for one model: measured, not yet measured, or measuring failed (with the reason). */
export type AutoProfile = { readonly profile: Profile } | { readonly profile: null; readonly failure: string | null }

/** Auto: the solver over a measured profile; before the devices were measured (or when that failed), the CPU preset, saying so. */
function resolveAuto(model: PlacementModel, devices: readonly DeviceInfo[], auto: AutoProfile): Resolution {
  if (auto.profile === null) {
    const cpu = buildPreset('cpu', model.config, devices, { weights: model.weights })
    const explanation =
      auto.failure === null
        ? `Auto has not measured this machine's devices for ${model.name} yet (not profiled yet): it measures them, in a few seconds, before the next reply, and everything runs on the CPU until then.`
        : `Auto could not measure this machine's devices (${auto.failure}), so everything runs on the CPU.`
    return { placement: cpu.placement, explanation, predicted: null }
  }
  const solved = planAuto(model.config, devices, auto.profile, { weights: model.weights, name: PRESET_LABELS.auto })
  return {
    placement: solved.placement,
    explanation: solved.explanation,
    predicted: { prefillTokensPerSec: solved.predictedTokensPerSec.prefill, decodeTokensPerSec: solved.predictedTokensPerSec.decode }
  }
}

/** No profile and no failure: what Auto resolves with before anything was measured. */
export const NOT_PROFILED: AutoProfile = Object.freeze({ profile: null, failure: null })

/** Resolves `setting` for `model` on `devices` (`auto` matters only for Auto); never throws (a choice that cannot run says why instead). */
export function resolvePlacement(setting: PlacementSetting, model: PlacementModel, devices: readonly DeviceInfo[], auto: AutoProfile = NOT_PROFILED): Resolution {
  try {
    if (setting.preset === 'custom') {
      return { placement: parsePlacement(setting.placement, model.config, devices, model.weights), explanation: null, predicted: null }
    }
    if (setting.preset === 'auto') return resolveAuto(model, devices, auto)
    const { placement, note } = buildPreset(setting.preset, model.config, devices, { weights: model.weights })
    return { placement, explanation: note, predicted: null }
  } catch (err) {
    const what = setting.preset === 'custom' ? `The placement "${setting.placement.name}"` : `The ${PRESET_LABELS[setting.preset]} placement`
    return { placement: null, explanation: `${what} cannot run ${model.name} on this machine: ${errorMessage(err)}`, predicted: null }
  }
}
