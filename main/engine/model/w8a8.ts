/**
 * @file W8A8 for integer NPUs, and llm.npu's shadow outlier execution (ASPLOS'25 §3.3–3.4), as plain arithmetic the
 * reference and the compiled graphs share. An integer NPU multiplies int8 weights (one scale per output channel)
 * by int8 activations (one scale per tensor, calibrated): y_i = sw_i · sx · Σ_k Wq[i,k] · xq_k, where
 * xq_k = clamp(round(x_k / sx), −127, 127). Real activations have a few channels far larger than the rest; their
 * values clip at ±127·sx, which ruins accuracy. The shadow repairs exactly the clipped part: the remainder
 * e_k = sx · (round(x_k / sx) − xq_k), non-zero only for outliers, multiplied in float by the dequantized
 * weight's columns of the hot channels (the few input channels that carry most outliers, kept in float beside the
 * NPU's int8 copy) — plus, for an outlier in a cold channel, a float fallback over that channel's column — so
 *   npu(clipped) + shadow = sw · sx · Wq · round(x / sx)   (the product without clipping), to float rounding.
 * Layers whose clipping matters little skip the shadow (llm.npu prunes ~85% of layers).
 */
import { tensorToFloat32 } from './tensor'
import type { Tensor } from './types'

/** The int8 range: weights use −127..127 (symmetric), activations saturate to −128..127 as QuantizeLinear does. */
export const INT8_MAX = 127
export const INT8_MIN = -128

/** A weight [d, n] as an integer NPU holds it: int8 values and one scale per output row. */
export interface PerChannelInt8 {
  readonly rows: number
  readonly cols: number
  readonly values: Int8Array
  /** [rows]: dequantized W[i, k] = scales[i] · values[i·cols + k] */
  readonly scales: Float32Array
}

/** Quantizes `w` [rows, cols] (row-major) symmetrically per row: scale = max|row| / 127, value = round(w / scale). */
export function quantizePerChannel(w: Float32Array, rows: number, cols: number): PerChannelInt8 {
  if (w.length !== rows * cols) throw new RangeError(`a [${rows}, ${cols}] weight needs ${rows * cols} values, got ${w.length}`)
  const values = new Int8Array(rows * cols)
  const scales = new Float32Array(rows)
  for (let i = 0; i < rows; i++) {
    let max = 0
    for (let k = 0; k < cols; k++) max = Math.max(max, Math.abs(w[i * cols + k]))
    const scale = max / INT8_MAX
    scales[i] = scale
    if (scale === 0) continue
    for (let k = 0; k < cols; k++) values[i * cols + k] = Math.max(-INT8_MAX, Math.min(INT8_MAX, Math.round(w[i * cols + k] / scale)))
  }
  return { rows, cols, values, scales }
}

/** The dequantized weight [rows, cols]: what the NPU's int8 copy stands for, in float (the shadow's columns). */
export function dequantizePerChannel(q: PerChannelInt8): Float32Array {
  const out = new Float32Array(q.rows * q.cols)
  for (let i = 0; i < q.rows; i++) for (let k = 0; k < q.cols; k++) out[i * q.cols + k] = q.scales[i] * q.values[i * q.cols + k]
  return out
}

/** One activation quantized per tensor: the int8 values the NPU gets and the outliers' remainder. */
export interface QuantizedActivation {
  /** [n] in −128..127 */
  readonly xq: Int32Array
  /** [n] sx · (round(x / sx) − xq): zero except where x clipped */
  readonly remainder: Float32Array
  /** input channels that clipped */
  readonly clipped: readonly number[]
}

/** round(x / scale) as QuantizeLinear computes it: the float32 quotient, rounded half to even (not yet saturated). */
export function activationSteps(x: number, scale: number): number {
  const v = Math.fround(x / scale)
  const r = Math.round(v)
  // Math.round rounds halves up; ties go to the even neighbour
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r
}

/**
 * QuantizeLinear of `x` at `scale` (zero point 0) and what saturation cut off, as the shadow's remainder. The
 * scale is a float32 in a graph, so it is rounded to one here too.
 */
export function quantizeActivation(x: Float32Array, activationScale: number): QuantizedActivation {
  const scale = Math.fround(activationScale)
  if (!(scale > 0) || !Number.isFinite(scale)) throw new RangeError(`an activation scale must be a positive float32, got ${activationScale}`)
  const n = x.length
  const xq = new Int32Array(n)
  const remainder = new Float32Array(n)
  const clipped: number[] = []
  for (let k = 0; k < n; k++) {
    const r = activationSteps(x[k], scale)
    const c = Math.max(INT8_MIN, Math.min(INT8_MAX, r))
    xq[k] = c
    if (c !== r) {
      remainder[k] = Math.fround(Math.fround(r - c) * scale)
      clipped.push(k)
    }
  }
  return { xq, remainder, clipped }
}

/** How one W8A8 matmul runs: its int8 weight, its calibrated activation scale, and its shadow (null: pruned). */
export interface W8A8Linear {
  readonly weight: PerChannelInt8
  readonly activationScale: number
  readonly shadow: Shadow | null
}

/** The shadow of one matmul: the hot channels' float columns, and whether cold outliers take the float fallback. */
export interface Shadow {
  /** input channels kept in float, ascending */
  readonly hotChannels: readonly number[]
  /** [hotChannels.length, rows]: column k of the dequantized weight for each hot channel k */
  readonly hotColumns: Float32Array
  /** true: an outlier in a cold channel is repaired too (reading that column of the int8 copy); exact results */
  readonly coldFallback: boolean
}

/** The shadow of `weight` for `hotChannels`. */
export function makeShadow(weight: PerChannelInt8, hotChannels: readonly number[], coldFallback = true): Shadow {
  const sorted = [...new Set(hotChannels)].sort((a, b) => a - b)
  for (const k of sorted) if (!Number.isInteger(k) || k < 0 || k >= weight.cols) throw new RangeError(`hot channel ${k} outside [0, ${weight.cols})`)
  const hotColumns = new Float32Array(sorted.length * weight.rows)
  sorted.forEach((k, j) => {
    for (let i = 0; i < weight.rows; i++) hotColumns[j * weight.rows + i] = weight.scales[i] * weight.values[i * weight.cols + k]
  })
  return { hotChannels: sorted, hotColumns, coldFallback }
}

/** What one W8A8 product did: how many channels clipped and how many of those the shadow repaired. */
export interface W8A8Run {
  readonly clipped: number
  readonly repairedHot: number
  readonly repairedCold: number
}

/**
 * out[d] = the NPU's int8 product of `x` [n] (clipped), plus the shadow's float product of the remainder.
 * Exact integer accumulation of the NPU part (int32 sums of int8 products fit any n ≤ 2^16).
 */
export function w8a8Linear(out: Float32Array, x: Float32Array, lin: W8A8Linear): W8A8Run {
  const { weight: w } = lin
  const sx = Math.fround(lin.activationScale)
  if (x.length !== w.cols || out.length < w.rows) throw new RangeError(`a [${w.rows}, ${w.cols}] W8A8 product needs x [${w.cols}], got [${x.length}]`)
  const a = quantizeActivation(x, sx)
  for (let i = 0; i < w.rows; i++) {
    let acc = 0
    const row = i * w.cols
    for (let k = 0; k < w.cols; k++) acc += w.values[row + k] * a.xq[k]
    // MatMulInteger's int32, cast to float32, times the float32 constant sx · sw_i (w8a8OutputScales)
    out[i] = Math.fround(Math.fround(acc) * Math.fround(sx * w.scales[i]))
  }
  const shadow = lin.shadow
  let repairedHot = 0
  let repairedCold = 0
  if (shadow !== null && a.clipped.length > 0) {
    for (const k of a.clipped) {
      const e = a.remainder[k]
      const j = binarySearch(shadow.hotChannels, k)
      if (j >= 0) {
        const col = shadow.hotColumns.subarray(j * w.rows, (j + 1) * w.rows)
        for (let i = 0; i < w.rows; i++) out[i] += col[i] * e
        repairedHot++
      } else if (shadow.coldFallback) {
        for (let i = 0; i < w.rows; i++) out[i] += w.scales[i] * w.values[i * w.cols + k] * e
        repairedCold++
      }
    }
  }
  return { clipped: a.clipped.length, repairedHot, repairedCold }
}

function binarySearch(sorted: readonly number[], v: number): number {
  let lo = 0
  let hi = sorted.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (sorted[mid] === v) return mid
    if (sorted[mid] < v) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/** The float32 constants a graph multiplies MatMulInteger's sums by: sx · sw_i per output channel. */
export function w8a8OutputScales(lin: Pick<W8A8Linear, 'weight' | 'activationScale'>): Float32Array {
  const sx = Math.fround(lin.activationScale)
  return Float32Array.from(lin.weight.scales, (sw) => Math.fround(sx * sw))
}

/** The weight of `t` [d, n] quantized per channel (a model matrix: rows are outputs). */
export function quantizeTensorPerChannel(t: Tensor): PerChannelInt8 {
  if (t.shape.length !== 2) throw new RangeError(`${t.name}: W8A8 needs a matrix, got shape [${t.shape.join(', ')}]`)
  const [rows, cols] = t.shape
  return quantizePerChannel(tensorToFloat32(t), rows, cols)
}
