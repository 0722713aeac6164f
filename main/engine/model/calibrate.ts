/**
 * @file Calibration for W8A8 (w8a8.ts), from the reference forward over a corpus: for each layer matmul, the
 * per-tensor activation scale, how often each input channel clips (its outliers), the hot channels (the few that
 * carry most outliers — llm.npu: <3% of channels hold >80%), and for each layer an importance score (how much of
 * its matmuls' output the clipping takes away), which decides the layers whose shadow is pruned.
 *
 * The scale comes from the channels, not the values: one channel 50× larger than the rest would otherwise set a
 * per-tensor scale at which every ordinary value uses a handful of the 255 levels. It is the
 * SCALE_CHANNEL_QUANTILE-th quantile of the channels' calibration maxima over 127: the top few percent of channels
 * clip, and the shadow repairs what they lose.
 */
import { createReferenceState, referenceForward, type ReferenceOptions } from './reference'
import { tensorToFloat32 } from './tensor'
import type { ModelConfig, ModelWeights, Tensor } from './types'
import { activationSteps, INT8_MAX, INT8_MIN, makeShadow, quantizeTensorPerChannel, w8a8Linear, type W8A8Linear } from './w8a8'

/** Calibration's format version (stored with the compiled model). */
export const CALIBRATION_VERSION = 1
/** Channels whose calibration maximum sets the scale: all but the largest 3%. */
export const SCALE_CHANNEL_QUANTILE = 0.97
/** Hot channels cover this share of a matmul's outliers… */
export const HOT_OUTLIER_SHARE = 0.8
/** …with at most this share of its input channels (the rest take the cold fallback). */
export const MAX_HOT_CHANNEL_SHARE = 0.03

/** One layer matmul's calibration. */
export interface MatmulCalibration {
  readonly layer: number
  /** per-tensor activation scale: x ≈ scale · int8 */
  readonly scale: number
  readonly inputChannels: number
  /** clipped values per input channel over the calibration tokens */
  readonly outliersPerChannel: readonly number[]
  /** input channels with any outlier */
  readonly outlierChannels: number
  /** hot channels (most outliers first), and the share of all outliers they carry */
  readonly hotChannels: readonly number[]
  readonly hotOutlierShare: number
}

/** A model's calibration: per matmul weight (by tensor name), per layer importance. */
export interface Calibration {
  readonly version: number
  readonly tokens: number
  readonly matmuls: Readonly<Record<string, MatmulCalibration>>
  /** per layer: mean over tokens of Σ‖W·e‖² / Σ‖W·x‖² over its matmuls (e = what clipping removes from x) */
  readonly layerImportance: readonly number[]
}

interface Model {
  readonly config: ModelConfig
  readonly weights: ModelWeights
}

/** The layer matmuls (the NPU's part), with their layer. */
export function layerMatmuls(weights: ModelWeights): Map<Tensor, number> {
  const out = new Map<Tensor, number>()
  weights.layers.forEach((l, i) => {
    for (const t of [l.wq, l.wk, l.wv, l.wo, l.wGate, l.wUp, l.wDown]) out.set(t, i)
  })
  return out
}

/** Runs the reference over `tokens` (one sequence, from position 0) with `options`; calls `each` with each position's logits. */
export function forEachPosition(model: Model, tokens: readonly number[], options: ReferenceOptions, each?: (pos: number, logits: Float32Array) => void): void {
  const state = createReferenceState(model.config, tokens.length, options)
  tokens.forEach((token, pos) => {
    const logits = referenceForward(model, state, token, pos)
    each?.(pos, logits)
  })
}

/**
 * Calibrates `model` on `sequences` (each run from position 0, within the context; two passes of the reference:
 * channel maxima, then outliers and importance).
 */
export function calibrate(model: Model, sequences: ReadonlyArray<readonly number[]>): Calibration {
  const tokens = sequences.reduce((n, s) => n + s.length, 0)
  if (tokens === 0) throw new RangeError('calibration needs at least one token')
  const matmuls = layerMatmuls(model.weights)
  const maxima = new Map<Tensor, Float32Array>()
  const overAll = (options: ReferenceOptions): void => {
    for (const s of sequences) forEachPosition(model, s, options)
  }
  overAll({
    observeInput: (t, x) => {
      if (!matmuls.has(t)) return
      let m = maxima.get(t)
      if (!m) maxima.set(t, (m = new Float32Array(x.length)))
      for (let k = 0; k < x.length; k++) m[k] = Math.max(m[k], Math.abs(x[k]))
    }
  })
  const scales = new Map<Tensor, number>()
  for (const [t, m] of maxima) scales.set(t, channelQuantile(m, SCALE_CHANNEL_QUANTILE) / INT8_MAX || Number.MIN_VALUE)

  const counts = new Map<Tensor, Float64Array>()
  const lost = new Float64Array(model.config.nLayers)
  const kept = new Float64Array(model.config.nLayers)
  const dense = new Map<Tensor, Float32Array>()
  overAll({
    observeInput: (t, x) => {
      const layer = matmuls.get(t)
      const scale = scales.get(t)
      if (layer === undefined || scale === undefined) return
      let c = counts.get(t)
      if (!c) counts.set(t, (c = new Float64Array(x.length)))
      let w = dense.get(t)
      if (!w) dense.set(t, (w = tensorToFloat32(t)))
      const rows = t.shape[0]
      const n = x.length
      // e: what clipping removes; ‖W·e‖² over the clipped channels only, ‖W·x‖² in full
      const clipped: number[] = []
      const e: number[] = []
      for (let k = 0; k < n; k++) {
        const r = activationSteps(x[k], scale)
        const q = Math.max(INT8_MIN, Math.min(INT8_MAX, r))
        if (q !== r) {
          c[k]++
          clipped.push(k)
          e.push((r - q) * scale)
        }
      }
      let lostSq = 0
      let keptSq = 0
      for (let i = 0; i < rows; i++) {
        let y = 0
        let ye = 0
        const row = i * n
        for (let k = 0; k < n; k++) y += w[row + k] * x[k]
        for (let j = 0; j < clipped.length; j++) ye += w[row + clipped[j]] * e[j]
        keptSq += y * y
        lostSq += ye * ye
      }
      lost[layer] += lostSq
      kept[layer] += keptSq
    }
  })

  const out: Record<string, MatmulCalibration> = {}
  for (const [t, layer] of matmuls) {
    const c = counts.get(t)
    const scale = scales.get(t)
    if (!c || scale === undefined) continue
    const perChannel = [...c]
    const total = perChannel.reduce((a, b) => a + b, 0)
    const order = perChannel.map((v, k) => [v, k] as const).filter(([v]) => v > 0).sort((a, b) => b[0] - a[0] || a[1] - b[1])
    const cap = Math.max(1, Math.ceil(MAX_HOT_CHANNEL_SHARE * c.length))
    const hot: number[] = []
    let covered = 0
    for (const [v, k] of order) {
      if (covered >= HOT_OUTLIER_SHARE * total || hot.length >= cap) break
      hot.push(k)
      covered += v
    }
    out[t.name] = { layer, scale, inputChannels: c.length, outliersPerChannel: perChannel, outlierChannels: order.length, hotChannels: hot, hotOutlierShare: total === 0 ? 1 : covered / total }
  }
  const layerImportance = Array.from(lost, (l, i) => (kept[i] === 0 ? 0 : l / kept[i]))
  return { version: CALIBRATION_VERSION, tokens, matmuls: out, layerImportance }
}

/** The q-quantile of `values`, rounding the rank down (64 channels at 0.97: the 62nd smallest, so the largest two clip). */
function channelQuantile(values: Float32Array, q: number): number {
  const sorted = Float32Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * sorted.length) - 1))]
}

/** Share of layers whose shadow is pruned by default: llm.npu skips it in ~85% of layers, the least important. */
export const DEFAULT_SHADOW_PRUNED_PERCENT = 85

/** Layers whose shadow runs when `prunedPercent` of the layers (the least important) skip it. */
export function shadowLayers(calibration: Calibration, prunedPercent: number): Set<number> {
  if (!(prunedPercent >= 0 && prunedPercent <= 100)) throw new RangeError(`prunedPercent must be in [0, 100], got ${prunedPercent}`)
  const n = calibration.layerImportance.length
  const keep = n - Math.round((prunedPercent / 100) * n)
  const order = calibration.layerImportance.map((v, i) => [v, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1])
  return new Set(order.slice(0, keep).map(([, i]) => i))
}

/** How the layer matmuls run under W8A8: with or without the shadow, and how many layers prune it. */
export interface W8A8Setup {
  readonly shadow: boolean
  /** share of layers (least important first) whose shadow is skipped; 0 with `shadow` false is plain W8A8 */
  readonly prunedPercent: number
  /** repair outliers outside the hot channels too (exact); default true */
  readonly coldFallback?: boolean
}

/** Reference options that run the matmuls of `linears` in W8A8 (the rest as usual). */
export function w8a8Reference(linears: ReadonlyMap<Tensor, W8A8Linear>): ReferenceOptions {
  return {
    linearOverride: (t) => {
      const lin = linears.get(t)
      return lin === undefined ? null : (out, x) => void w8a8Linear(out, x, lin)
    }
  }
}

/** Each layer matmul as a W8A8Linear per `setup` (the lm-head and embeddings stay float). */
export function w8a8Linears(model: Model, calibration: Calibration, setup: W8A8Setup): Map<Tensor, W8A8Linear> {
  const keep = setup.shadow ? shadowLayers(calibration, setup.prunedPercent) : new Set<number>()
  const out = new Map<Tensor, W8A8Linear>()
  for (const [t, layer] of layerMatmuls(model.weights)) {
    const cal = calibration.matmuls[t.name]
    if (cal === undefined) throw new Error(`the calibration has no entry for ${t.name} (another model?)`)
    const weight = quantizeTensorPerChannel(t)
    out.set(t, { weight, activationScale: cal.scale, shadow: keep.has(layer) ? makeShadow(weight, cal.hotChannels, setup.coldFallback ?? true) : null })
  }
  return out
}
