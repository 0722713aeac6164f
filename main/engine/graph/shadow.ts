/**
 * @file llm.npu's shadow outlier execution as graphs for a float device (model/w8a8.ts has the arithmetic): while
 * the NPU multiplies the clipped int8 activations of a layer's matmuls, a shadow graph on the CPU or GPU
 * multiplies what clipping removed, e = sx · (round(x / sx) − clamp(round(x / sx), −128, 127)), by the
 * dequantized weight's columns, and the runtime adds the two. Hot channels (calibration's few channels that carry
 * most outliers) have their columns kept in float; an outlier in any other channel takes the fallback, which
 * gathers just the channels that clipped in this run from an int8 copy of the weight, so the sum equals the
 * unclipped quantized product.
 *
 * Where the correction goes follows from where the matmul's input is a value between op groups:
 *   qkv       attn_in  → corrections of q, k, new_v       (summed into the NPU's outputs before rope)
 *   attn-out  attn     → correction of resid_attn          (summed)
 *   ffn-up    ffn_in   → ffn_corr: gate and up corrections (an input of the NPU's ffn graph, added before SwiGLU)
 *   ffn-down  ffn_h    → correction of resid               (ffn_h: the NPU ffn graph's SwiGLU output; summed)
 */
import { quantizeTensorPerChannel, type ModelConfig, type ModelWeights, type Tensor } from '../model'
import { EmitContext, resolveGraphOptions, type GraphOptions } from './emit-context'
import { GraphBuilder } from './onnx-builder'
import { describeValue, VALUE } from './op-groups'
import { GRAPH_COMPILER_VERSION, type CompilableModel, type CompileSink } from './compile'

/** A shadow graph's place in a layer. */
export type ShadowStage = 'qkv' | 'attn-out' | 'ffn-up' | 'ffn-down'

/** The stages a shadowed layer runs, in order. */
export const SHADOW_STAGES: readonly ShadowStage[] = ['qkv', 'attn-out', 'ffn-up', 'ffn-down']

/** One shadow graph: a layer's stage, with the hot channels of each of its weights (by tensor name). */
export interface ShadowSpec {
  readonly layer: number
  readonly stage: ShadowStage
  readonly hot: Readonly<Record<string, readonly number[]>>
}

/** What a stage reads and writes: one input value, the corrections (outputs) it produces. */
export interface ShadowIo {
  readonly input: string
  readonly outputs: readonly string[]
  /** true: the outputs are corrections summed into the NPU's values of the same name; false: an NPU input */
  readonly summed: boolean
}

/** The I/O of `stage` in `layer`. */
export function shadowIo(layer: number, stage: ShadowStage): ShadowIo {
  switch (stage) {
    case 'qkv':
      return { input: VALUE.attnIn(layer), outputs: [VALUE.q(layer), VALUE.k(layer), VALUE.newV(layer)], summed: true }
    case 'attn-out':
      return { input: VALUE.attn(layer), outputs: [VALUE.residAttn(layer)], summed: true }
    case 'ffn-up':
      return { input: VALUE.ffnIn(layer), outputs: [VALUE.ffnCorr(layer)], summed: false }
    case 'ffn-down':
      return { input: VALUE.ffnHidden(layer), outputs: [VALUE.layerOut(layer)], summed: true }
  }
}

/** The weights a stage corrects, with the factor the NPU's graph folds into each (the query's 1/√hd). */
export function shadowWeights(config: ModelConfig, weights: ModelWeights, layer: number, stage: ShadowStage): Array<{ tensor: Tensor; factor: number }> {
  const w = weights.layers[layer]
  if (w === undefined) throw new RangeError(`layer ${layer} is outside [0, ${config.nLayers})`)
  switch (stage) {
    case 'qkv':
      return [
        { tensor: w.wq, factor: 1 / Math.sqrt(config.headDim) },
        { tensor: w.wk, factor: 1 },
        { tensor: w.wv, factor: 1 }
      ]
    case 'attn-out':
      return [{ tensor: w.wo, factor: 1 }]
    case 'ffn-up':
      return [
        { tensor: w.wGate, factor: 1 },
        { tensor: w.wUp, factor: 1 }
      ]
    case 'ffn-down':
      return [{ tensor: w.wDown, factor: 1 }]
  }
}

/**
 * e · W_deqᵀ for one weight: the hot channels' float columns always, plus the columns of whichever other channels
 * clipped somewhere in this run, gathered from the int8 copy and dequantized per output channel. A run whose cold
 * channels never clip gathers nothing (an empty matmul adds zeros).
 */
function emitShadowLinear(ctx: EmitContext, e: string, t: Tensor, factor: number, hot: readonly number[], label: string): string {
  const b = ctx.b
  const q = quantizeTensorPerChannel(t)
  const { rows: n, cols: k } = q
  const isHot = new Uint8Array(k)
  for (const c of hot) {
    if (!Number.isInteger(c) || c < 0 || c >= k) throw new RangeError(`${t.name}: hot channel ${c} outside [0, ${k})`)
    isHot[c] = 1
  }
  const hotList = [...new Set(hot)].sort((a, c) => a - c)
  const scales = Float32Array.from(q.scales, (s) => Math.fround(s * factor))
  let hotPart: string | null = null
  if (hotList.length > 0) {
    // [H, N]: column c of the dequantized weight for each hot channel c
    const cols = new Float32Array(hotList.length * n)
    hotList.forEach((c, j) => {
      for (let i = 0; i < n; i++) cols[j * n + i] = scales[i] * q.values[i * k + c]
    })
    const eHot = b.op('Gather', [e, ctx.i64(hotList)], { name: `${label}/hot_e`, attrs: { axis: { int: -1 } } })
    hotPart = b.op('MatMul', [eHot, b.f32(`${label}.hot_columns`, [hotList.length, n], cols)], { name: `${label}/hot` })
  }
  const coldMask = b.f32(`${label}.cold_mask`, [k], Float32Array.from(isHot, (h) => 1 - h))
  const eCold = b.op('Mul', [e, coldMask], { name: `${label}/cold_e` })
  const anyRow = b.op('ReduceMax', [b.op('Abs', [eCold], { name: `${label}/cold_abs` }), ctx.i64([0, 1])], { name: `${label}/cold_max`, attrs: { keepdims: { int: 0 } } })
  const clippedAt = b.op('Greater', [anyRow, ctx.f32Scalar(0)], { name: `${label}/cold_clipped` })
  const idx = b.op('Reshape', [b.op('NonZero', [clippedAt], { name: `${label}/cold_where` }), ctx.i64([-1])], { name: `${label}/cold_channels` })
  const wT = new Int8Array(k * n)
  for (let i = 0; i < n; i++) for (let c = 0; c < k; c++) wT[c * n + i] = q.values[i * k + c]
  const rowsInt8 = b.op('Gather', [b.initializer(`${label}.weight_int8_t`, 'int8', [k, n], new Uint8Array(wT.buffer)), idx], { name: `${label}/cold_rows`, attrs: { axis: { int: 0 } } })
  const rows = b.op('DequantizeLinear', [rowsInt8, b.f32(`${label}.scales`, [n], scales)], { name: `${label}/cold_dequantize`, attrs: { axis: { int: 1 } } })
  const eGathered = b.op('Gather', [eCold, idx], { name: `${label}/cold_gather`, attrs: { axis: { int: -1 } } })
  const coldPart = b.op('MatMul', [eGathered, rows], { name: `${label}/cold` })
  return hotPart === null ? coldPart : b.op('Add', [hotPart, coldPart], { name: `${label}/sum` })
}

/** What clipping at `scale` removes from x: sx · (round(x / sx) − clamp(round(x / sx), −128, 127)), as QuantizeLinear rounds. */
function emitRemainder(ctx: EmitContext, x: string, scale: number, label: string): string {
  const b = ctx.b
  const sx = ctx.f32Scalar(Math.fround(scale))
  const steps = b.op('Round', [b.op('Div', [x, sx], { name: `${label}/steps_f` })], { name: `${label}/steps` })
  const clipped = b.op('Clip', [steps, ctx.f32Scalar(-128), ctx.f32Scalar(127)], { name: `${label}/clip` })
  return b.op('Mul', [b.op('Sub', [steps, clipped], { name: `${label}/cut` }), sx], { name: `${label}/remainder` })
}

/**
 * Compiles one shadow graph: input `shadowIo(...).input` [1, S, K], outputs its corrections (ffn-up: gate and
 * up side by side in ffn_corr). Every weight needs its W8A8 activation scale in `options.w8a8`.
 */
export function compileShadow(model: CompilableModel, spec: ShadowSpec, options: GraphOptions, sink: CompileSink = {}): Uint8Array {
  const resolved = resolveGraphOptions(options)
  const table = resolved.w8a8
  if (table === null) throw new Error('a shadow graph needs the W8A8 activation scales (GraphOptions.w8a8)')
  const { config } = model
  const b = new GraphBuilder('tandem-shadow', sink.external ?? null)
  const ctx = new EmitContext(b, config, model.weights, resolved)
  const seq = resolved.staticRows ?? 'seq'
  const io = shadowIo(spec.layer, spec.stage)
  const { elem, dims } = describeValue(config, io.input, seq)
  const x = b.input(io.input, elem, dims)
  const label = `layer${spec.layer}/shadow_${spec.stage}`
  // one remainder per distinct scale (the qkv weights share an input but were calibrated one by one)
  const remainders = new Map<number, string>()
  const ys = shadowWeights(config, model.weights, spec.layer, spec.stage).map(({ tensor, factor }) => {
    const scale = table[tensor.name]
    if (scale === undefined) throw new Error(`shadow of ${tensor.name}: no W8A8 activation scale`)
    let e = remainders.get(scale)
    if (e === undefined) {
      e = emitRemainder(ctx, x, scale, `${label}/${tensor.name}`)
      remainders.set(scale, e)
    }
    return emitShadowLinear(ctx, e, tensor, factor, spec.hot[tensor.name] ?? [], `${label}/${tensor.name}`)
  })
  const outputs = spec.stage === 'ffn-up' ? [b.op('Concat', ys, { name: `${label}/corr`, attrs: { axis: { int: -1 } } })] : ys
  io.outputs.forEach((name, i) => {
    b.node('Identity', [outputs[i]], { name: `${name}/out`, outputs: [name] })
    b.output(name, 'float32', describeValue(config, name, seq).dims)
  })
  return b.toBytes(GRAPH_COMPILER_VERSION)
}
