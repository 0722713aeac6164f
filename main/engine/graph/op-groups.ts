/**
 * @file The model as an ordered list of op groups — per layer: attention norm, qkv projection, rope,
 * attention, output projection (+ residual), FFN norm, FFN (+ residual); then final norm and lm head —
 * each an emitter from named input values to named output values, in the reference forward's order.
 * The planner cuts this list into per-device segments; a SegmentSpec is a run of groups plus the
 * values crossing its boundary (the whole list when everything runs on one device).
 */
import type { LayerWeights, ModelConfig } from '../model'
import { emitAttention, emitRope } from './emit-attention'
import type { EmitContext } from './emit-context'
import { emitLinear, emitLinears } from './linear'
import { partOperands, type GroupPart } from './partition'
import type { Dim, ElemType } from './onnx-builder'
import { VALUE } from './values'

export { VALUE }

/** The kinds of op group, in execution order within a layer (then the two final groups). */
export type GroupKind = 'attn-norm' | 'qkv' | 'rope' | 'attention' | 'attn-out' | 'ffn-norm' | 'ffn' | 'final-norm' | 'lm-head'

/** Per-layer group kinds in order. */
export const LAYER_GROUP_KINDS: readonly GroupKind[] = ['attn-norm', 'qkv', 'rope', 'attention', 'attn-out', 'ffn-norm', 'ffn']

/** One op group: which layer (null for the final groups), what it reads and what it produces. */
export interface OpGroup {
  readonly layer: number | null
  readonly kind: GroupKind
  readonly inputs: readonly string[]
  readonly outputs: readonly string[]
}

/** A contiguous run of groups compiled into one graph, with the values crossing its boundary. */
export interface SegmentSpec {
  readonly groups: readonly OpGroup[]
  /** values read by the segment but produced outside it: the graph inputs */
  readonly inputs: readonly string[]
  /** values produced inside and needed outside (or model results): the graph outputs */
  readonly outputs: readonly string[]
}

/** Values the runtime consumes from a full forward: logits and every layer's new K/V rows. */
export function modelResultValues(config: ModelConfig): string[] {
  const out: string[] = [VALUE.logits]
  for (let l = 0; l < config.nLayers; l++) out.push(VALUE.newK(l), VALUE.newV(l))
  return out
}

function layerGroup(l: number, kind: GroupKind): OpGroup {
  const V = VALUE
  switch (kind) {
    case 'attn-norm':
      return { layer: l, kind, inputs: [V.layerIn(l)], outputs: [V.attnIn(l)] }
    case 'qkv':
      return { layer: l, kind, inputs: [V.attnIn(l)], outputs: [V.q(l), V.k(l), V.newV(l)] }
    case 'rope':
      return { layer: l, kind, inputs: [V.q(l), V.k(l), V.positions], outputs: [V.qRot(l), V.newK(l)] }
    case 'attention':
      return { layer: l, kind, inputs: [V.qRot(l), V.newK(l), V.newV(l), V.pastK(l), V.pastV(l), V.positions], outputs: [V.attn(l)] }
    case 'attn-out':
      return { layer: l, kind, inputs: [V.attn(l), V.layerIn(l)], outputs: [V.residAttn(l)] }
    case 'ffn-norm':
      return { layer: l, kind, inputs: [V.residAttn(l)], outputs: [V.ffnIn(l)] }
    case 'ffn':
      return { layer: l, kind, inputs: [V.ffnIn(l), V.residAttn(l)], outputs: [V.layerOut(l)] }
    default:
      throw new Error(`${kind} is not a layer group`)
  }
}

/** Every op group of the model, in execution order. */
export function modelOpGroups(config: ModelConfig): OpGroup[] {
  const groups: OpGroup[] = []
  for (let l = 0; l < config.nLayers; l++) for (const kind of LAYER_GROUP_KINDS) groups.push(layerGroup(l, kind))
  groups.push({ layer: null, kind: 'final-norm', inputs: [VALUE.layerIn(config.nLayers)], outputs: [VALUE.finalIn] })
  groups.push({ layer: null, kind: 'lm-head', inputs: [VALUE.finalIn], outputs: [VALUE.logits] })
  return groups
}

/**
 * The boundary of `groups` within `all`: inputs = read but not produced inside; outputs = produced
 * inside and read by a group outside, or a model result (logits, new K/V).
 */
export function segmentSpec(config: ModelConfig, groups: readonly OpGroup[], all: readonly OpGroup[]): SegmentSpec {
  const inside = new Set(groups)
  const produced = new Set(groups.flatMap((g) => g.outputs))
  const inputs = [...new Set(groups.flatMap((g) => g.inputs).filter((v) => !produced.has(v)))]
  const neededOutside = new Set(all.filter((g) => !inside.has(g)).flatMap((g) => g.inputs))
  for (const r of modelResultValues(config)) neededOutside.add(r)
  const outputs = [...produced].filter((v) => neededOutside.has(v))
  return { groups, inputs, outputs }
}

/** The whole model as one segment: inputs hidden, positions, past K/V; outputs logits and new K/V. */
export function wholeModelSegment(config: ModelConfig): SegmentSpec {
  const all = modelOpGroups(config)
  return segmentSpec(config, all, all)
}

/**
 * Element type and dims of a logical value, for graph inputs and outputs: activations are [1, S, width]
 * (S = `seq`: "seq", the tokens in the run, or a fixed count for static-shape graphs); the cache inputs are
 * keys transposed [nKv, hd, C] and values [nKv, C, hd] (C = "capacity", the runtime's buffer length, ≥ the
 * cached positions).
 */
export function describeValue(config: ModelConfig, name: string, seq: Dim = 'seq'): { elem: ElemType; dims: Dim[] } {
  const { dim, nHeads, nKvHeads, headDim } = config
  const S = seq
  const C = 'capacity'
  if (name === VALUE.positions) return { elem: 'int64', dims: [S] }
  if (name === VALUE.logits) return { elem: 'float32', dims: [1, config.vocabSize] }
  if (name === VALUE.finalIn) return { elem: 'float32', dims: [1, 1, dim] }
  const m = /^([a-z_]+?)_(\d+)$/.exec(name)
  const base = m ? m[1] : name
  switch (base) {
    case 'hidden':
    case 'resid':
    case 'resid_attn':
    case 'attn_in':
    case 'ffn_in':
      return { elem: 'float32', dims: [1, S, dim] }
    case 'q':
    case 'q_rot':
    case 'attn':
      return { elem: 'float32', dims: [1, S, nHeads * headDim] }
    case 'k':
    case 'new_k':
    case 'new_v':
      return { elem: 'float32', dims: [1, S, nKvHeads * headDim] }
    case 'ffn_h':
      return { elem: 'float32', dims: [1, S, config.hiddenDim] }
    case 'ffn_corr':
      return { elem: 'float32', dims: [1, S, 2 * config.hiddenDim] }
    case 'past_k':
      return { elem: 'float32', dims: [nKvHeads, headDim, C] }
    case 'past_v':
      return { elem: 'float32', dims: [nKvHeads, C, headDim] }
    default:
      throw new Error(`unknown graph value ${name}`)
  }
}

/**
 * Emits one group: reads its inputs from ctx.values and records its outputs there. With `part` (a matmul
 * group only, checked by `checkGroupPart`), the group's share of a row partition: sliced weights, outputs
 * [1, S, end − start] (logits [1, end − start]), and the part's residual.
 */
export function emitGroup(ctx: EmitContext, group: OpGroup, part: GroupPart | null = null): void {
  const { b, config } = ctx
  const V = VALUE
  const weight = partOperands(ctx.weights, group.layer, part)
  if (group.layer === null) {
    if (group.kind === 'final-norm') {
      // only the last position's logits are returned: normalize (fusing the last residual add), keep the last row
      const normed = ctx.normOf(V.layerIn(config.nLayers), ctx.weights.finalNorm, 'final/norm')
      ctx.set(V.finalIn, b.op('Slice', [normed, ctx.i64([-1]), ctx.i64([Number.MAX_SAFE_INTEGER]), ctx.i64([1])], { name: 'final/last_row' }))
    } else if (group.kind === 'lm-head') {
      const head = weight('output')
      const width = head.range ? head.range.end - head.range.start : config.vocabSize
      const logits = emitLinear(ctx, ctx.get(V.finalIn), head.w, null, 'lm_head') // [1, 1, width]
      ctx.set(V.logits, b.op('Reshape', [logits, ctx.i64([1, width])], { name: 'lm_head/logits' }))
    } else {
      throw new Error(`group ${group.kind} needs a layer`)
    }
    return
  }
  const l = group.layer
  const w: LayerWeights = ctx.weights.layers[l]
  const label = `layer${l}`
  switch (group.kind) {
    case 'attn-norm':
      ctx.set(V.attnIn(l), ctx.normOf(V.layerIn(l), w.attnNorm, `${label}/attn_norm`))
      return
    case 'qkv': {
      // queries carry the attention scale 1/sqrt(hd) (folded into wq and bq; RoPE is linear), so the score
      // matmuls need no scaling op — which ORT would fuse into a FusedMatMul with alpha ≠ 1, off MLAS's M=1 fast path
      const labels = [`${label}.wq`, `${label}.wk`, `${label}.wv`]
      const [wq, wk, wv] = [weight('wq'), weight('wk'), weight('wv')]
      const [q, k, v] = emitLinears(ctx, ctx.get(V.attnIn(l)), [wq.w, wk.w, wv.w], [wq.bias, wk.bias, wv.bias], labels, [1 / Math.sqrt(config.headDim), 1, 1])
      ctx.set(V.q(l), q)
      ctx.set(V.k(l), k)
      ctx.set(V.newV(l), v)
      return
    }
    case 'rope': {
      ctx.set(V.qRot(l), emitRope(ctx, ctx.get(V.q(l)), config.nHeads, `${label}/rope_q`))
      ctx.set(V.newK(l), emitRope(ctx, ctx.get(V.k(l)), config.nKvHeads, `${label}/rope_k`))
      return
    }
    case 'attention': {
      const inputs = { q: ctx.get(V.qRot(l)), k: ctx.get(V.newK(l)), v: ctx.get(V.newV(l)), pastKeys: ctx.get(V.pastK(l)), pastValues: ctx.get(V.pastV(l)) }
      ctx.set(V.attn(l), emitAttention(ctx, inputs, `${label}/attn`))
      return
    }
    case 'attn-out': {
      const wo = weight('wo')
      const y = emitLinear(ctx, ctx.get(V.attn(l)), wo.w, null, `${label}.wo`)
      if (part?.residual === 'none') {
        ctx.set(V.residAttn(l), y)
      } else {
        // a row part adds its own features [start, end) of the residual
        const resid = wo.range
          ? b.op('Slice', [ctx.get(V.layerIn(l)), ctx.i64([wo.range.start]), ctx.i64([wo.range.end]), ctx.i64([-1])], { name: `${label}/resid_slice` })
          : ctx.get(V.layerIn(l))
        ctx.setSum(V.residAttn(l), resid, y)
      }
      return
    }
    case 'ffn-norm':
      ctx.set(V.ffnIn(l), ctx.normOf(V.residAttn(l), w.ffnNorm, `${label}/ffn_norm`))
      return
    case 'ffn': {
      const [gateW, upW, downW] = [weight('wGate'), weight('wUp'), weight('wDown')]
      let [gate, up] = emitLinears(ctx, ctx.get(V.ffnIn(l)), [gateW.w, upW.w], [null, null], [`${label}.w_gate`, `${label}.w_up`])
      const shadowed = ctx.has(V.ffnCorr(l))
      if (shadowed) {
        // W8A8 with a shadow: its corrections of the clipped gate and up products, added before the nonlinearity
        const corr = ctx.get(V.ffnCorr(l))
        const h = config.hiddenDim
        gate = b.op('Add', [gate, b.op('Slice', [corr, ctx.i64([0]), ctx.i64([h]), ctx.i64([-1])], { name: `${label}/gate_corr` })], { name: `${label}/gate_corrected` })
        up = b.op('Add', [up, b.op('Slice', [corr, ctx.i64([h]), ctx.i64([2 * h]), ctx.i64([-1])], { name: `${label}/up_corr` })], { name: `${label}/up_corrected` })
      }
      // SwiGLU: silu(gate) · up, silu(g) = g · sigmoid(g) (ORT fuses the pair into one kernel)
      const silu = b.op('Mul', [gate, b.op('Sigmoid', [gate], { name: `${label}/gate_sigmoid` })], { name: `${label}/gate_silu` })
      // a shadowed ffn hands SwiGLU's output to the shadow of w_down: named as the value, it needs no Identity (not an NPU op)
      const swiglu = b.node('Mul', [silu, up], { name: `${label}/swiglu`, ...(shadowed ? { outputs: [V.ffnHidden(l)] } : {}) })[0]
      ctx.set(V.ffnHidden(l), swiglu)
      const down = emitLinear(ctx, swiglu, downW.w, null, `${label}.w_down`)
      // a part's down projection is a partial sum over its hidden units; one part adds the residual
      if (part?.residual === 'none') ctx.set(V.layerOut(l), down)
      else ctx.setSum(V.layerOut(l), ctx.get(V.residAttn(l)), down)
      return
    }
    default:
      throw new Error(`group ${group.kind} has no layer`)
  }
}
