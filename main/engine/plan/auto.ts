/**
 * @file Auto as the settings panel shows it: the solver's placement and one-sentence explanation, with the
 * predicted speed in tokens per second — prefill from the predicted time of one chunk, decode from the
 * predicted time of one step (one token).
 */
import type { DeviceInfo } from '../devices'
import type { ModelConfig } from '../model'
import type { Placement } from './placement'
import type { Profile } from './profile'
import { solvePlacement, type SolverOptions } from './solver'

/** Shortest predicted time a rate is computed from (ms): keeps a rate finite for a zero-cost profile. */
const MIN_PREDICTED_MS = 1e-6

/** The Auto placement with its explanation and predicted times and rates. */
export interface AutoPlan {
  readonly placement: Placement
  readonly explanation: string
  /** ms per prefill chunk of `placement.prefillChunkTokens` tokens, and per decode step */
  readonly predictedMs: { readonly prefill: number; readonly decode: number }
  /** prompt tokens per second during prefill, generated tokens per second during decode */
  readonly predictedTokensPerSec: { readonly prefill: number; readonly decode: number }
}

/** Tokens per second from `tokens` taking `ms`. */
function rate(tokens: number, ms: number): number {
  return (tokens * 1000) / Math.max(ms, MIN_PREDICTED_MS)
}

/** Solves the Auto placement for this model on these devices from `profile` (throws as solvePlacement does). */
export function planAuto(config: ModelConfig, devices: readonly DeviceInfo[], profile: Profile, options: SolverOptions = {}): AutoPlan {
  const { placement, predictedMs, explanation } = solvePlacement(config, devices, profile, options)
  return {
    placement,
    explanation,
    predictedMs,
    predictedTokensPerSec: { prefill: rate(placement.prefillChunkTokens, predictedMs.prefill), decode: rate(1, predictedMs.decode) }
  }
}
