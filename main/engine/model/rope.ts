/**
 * @file RoPE frequencies, shared by the reference forward and the graph compiler so both rotate alike.
 */
import type { ModelConfig } from './types'

/**
 * Inverse frequencies θ_j for j in [0, ropeDim/2): base^(-2j/ropeDim), then Llama-3 scaling or GGUF
 * per-frequency factors. Float64 so the two consumers round identically from one source.
 */
export function ropeInvFreq(config: ModelConfig): Float64Array {
  const half = config.ropeDim / 2
  const inv = new Float64Array(half)
  for (let j = 0; j < half; j++) inv[j] = Math.pow(config.ropeTheta, (-2 * j) / config.ropeDim)
  const s = config.ropeScaling
  if (s) {
    // Llama 3.1: long wavelengths are divided by `factor`, short ones kept, a smooth blend between.
    const lowFreqWavelen = s.originalContextLength / s.lowFreqFactor
    const highFreqWavelen = s.originalContextLength / s.highFreqFactor
    for (let j = 0; j < half; j++) {
      const wavelen = (2 * Math.PI) / inv[j]
      if (wavelen < highFreqWavelen) continue
      if (wavelen > lowFreqWavelen) {
        inv[j] /= s.factor
        continue
      }
      const smooth = (s.originalContextLength / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor)
      inv[j] = (1 - smooth) * (inv[j] / s.factor) + smooth * inv[j]
    }
  }
  const f = config.ropeFreqFactors
  if (f) for (let j = 0; j < half; j++) inv[j] /= f[j]
  return inv
}

/**
 * Index pairs rotated together inside one head, as [first, second] per frequency j.
 * adjacent: (2j, 2j+1); rotate-half: (j, j + ropeDim/2).
 */
export function ropePair(config: ModelConfig, j: number): readonly [number, number] {
  return config.ropePairing === 'adjacent' ? [2 * j, 2 * j + 1] : [j, j + config.ropeDim / 2]
}
