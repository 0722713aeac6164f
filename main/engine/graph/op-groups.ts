/**
 * @file The model as an ordered list of op groups — per layer: attention norm, qkv projection, rope,
 * attention, output projection (+ residual), FFN norm, FFN (+ residual); then final norm and lm head —
 * each an emitter from named input values to named output values, in the reference forward's order.
 * A later planner cuts this list into per-device segments; a SegmentSpec is a run of groups plus the
 * values crossing its boundary. Today the whole list compiles as one segment.
 */
import { tensorToFloat32, type LayerWeights, type ModelConfig, type Tensor } from '../model'
import { emitAttention, emitRope } from './emit-attention'
import type { EmitContext } from './emit-context'
import { emitLinear } from './linear'
import type { Dim, ElemType } from './onnx-builder'

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

/** Logical value names; the whole-model graph's I/O uses exactly these names. */
export const VALUE = {
  hidden: 'hidden',
  positions: 'positions',
  logits: 'logits',
  finalIn: 'final_in',
  pastK: (l: number) => `past_k_${l}`,
  pastV: (l: number) => `past_v_${l}`,
  newK: (l: number) => `new_k_${l}`,
  newV: (l: number) => `new_v_${l}`,
  layerIn: (l: number) => (l === 0 ? 'hidden' : `resid_${l - 1}`),
  attnIn: (l: number) => `attn_in_${l}`,
  q: (l: number) => `q_${l}`,
  k: (l: number) => `k_${l}`,
  qRot: (l: number) => `q_rot_${l}`,
  attn: (l: number) => `attn_${l}`,
  residAttn: (l: number) => `resid_attn_${l}`,
  ffnIn: (l: number) => `ffn_in_${l}`,
  layerOut: (l: number) => `resid_${l}`
} as const

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

/** Element type and dims (S = "seq", P = "past") of a logical value, for graph inputs and outputs. */
export function describeValue(config: ModelConfig, name: string): { elem: ElemType; dims: Dim[] } {
  const { dim, nHeads, nKvHeads, headDim } = config
  const S = 'seq'
  if (name === VALUE.positions) return { elem: 'int64', dims: [S] }
  if (name === VALUE.logits) return { elem: 'float32', dims: [1, config.vocabSize] }
  if (name === VALUE.finalIn) return { elem: 'float32', dims: [1, dim] }
  const m = /^([a-z_]+?)_(\d+)$/.exec(name)
  const base = m ? m[1] : name
  switch (base) {
    case 'hidden':
    case 'resid':
    case 'resid_attn':
    case 'attn_in':
    case 'ffn_in':
      return { elem: 'float32', dims: [S, dim] }
    case 'q':
    case 'attn':
      return { elem: 'float32', dims: [S, nHeads * headDim] }
    case 'k':
      return { elem: 'float32', dims: [S, nKvHeads * headDim] }
    case 'q_rot':
      return { elem: 'float32', dims: [S, nHeads, headDim] }
    case 'new_k':
    case 'new_v':
      return { elem: 'float32', dims: [S, nKvHeads, headDim] }
    case 'past_k':
    case 'past_v':
      return { elem: 'float32', dims: ['past', nKvHeads, headDim] }
    default:
      throw new Error(`unknown graph value ${name}`)
  }
}

/** RMSNorm over the last axis: x / sqrt(mean(x²) + eps) · weight. */
function rmsNorm(ctx: EmitContext, x: string, weight: Tensor, label: string): string {
  const w = ctx.b.f32(`${label}.weight`, [ctx.config.dim], tensorToFloat32(weight))
  return ctx.b.op('SimplifiedLayerNormalization', [x, w], {
    name: label,
    attrs: { axis: { int: -1 }, epsilon: { float: ctx.config.normEps }, stash_type: { int: 1 } }
  })
}

/** Emits one group: reads its inputs from ctx.values and records its outputs there. */
export function emitGroup(ctx: EmitContext, group: OpGroup): void {
  const { b, config } = ctx
  const V = VALUE
  if (group.layer === null) {
    if (group.kind === 'final-norm') {
      // only the last position's logits are returned: slice the last row first, then normalize it
      const x = ctx.get(V.layerIn(config.nLayers))
      const last = b.op('Slice', [x, ctx.i64([-1]), ctx.i64([Number.MAX_SAFE_INTEGER]), ctx.i64([0])], { name: 'final/last_row' })
      ctx.set(V.finalIn, rmsNorm(ctx, last, ctx.weights.finalNorm, 'final/norm'))
    } else if (group.kind === 'lm-head') {
      const logits = emitLinear(ctx, ctx.get(V.finalIn), ctx.weights.output, null, 'lm_head')
      ctx.set(V.logits, logits)
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
      ctx.set(V.attnIn(l), rmsNorm(ctx, ctx.get(V.layerIn(l)), w.attnNorm, `${label}/attn_norm`))
      return
    case 'qkv': {
      const x = ctx.get(V.attnIn(l))
      ctx.set(V.q(l), emitLinear(ctx, x, w.wq, w.bq, `${label}.wq`))
      ctx.set(V.k(l), emitLinear(ctx, x, w.wk, w.bk, `${label}.wk`))
      const v = emitLinear(ctx, x, w.wv, w.bv, `${label}.wv`)
      // V rows go to the cache as [S, nKv, hd]
      const shape = ctx.i64([0, config.nKvHeads, config.headDim])
      ctx.set(V.newV(l), b.op('Reshape', [v, shape], { name: `${label}/v_heads`, outputs: [V.newV(l)] }))
      return
    }
    case 'rope': {
      const q = b.op('Reshape', [ctx.get(V.q(l)), ctx.i64([0, config.nHeads, config.headDim])], { name: `${label}/q_heads` })
      const k = b.op('Reshape', [ctx.get(V.k(l)), ctx.i64([0, config.nKvHeads, config.headDim])], { name: `${label}/k_heads` })
      ctx.set(V.qRot(l), emitRope(ctx, q, config.nHeads, `${label}/rope_q`))
      ctx.set(V.newK(l), emitRope(ctx, k, config.nKvHeads, `${label}/rope_k`, V.newK(l)))
      return
    }
    case 'attention':
      ctx.set(
        V.attn(l),
        emitAttention(ctx, ctx.get(V.qRot(l)), ctx.get(V.newK(l)), ctx.get(V.newV(l)), ctx.get(V.pastK(l)), ctx.get(V.pastV(l)), `${label}/attn`)
      )
      return
    case 'attn-out': {
      const o = emitLinear(ctx, ctx.get(V.attn(l)), w.wo, null, `${label}.wo`)
      ctx.set(V.residAttn(l), b.op('Add', [ctx.get(V.layerIn(l)), o], { name: `${label}/attn_residual` }))
      return
    }
    case 'ffn-norm':
      ctx.set(V.ffnIn(l), rmsNorm(ctx, ctx.get(V.residAttn(l)), w.ffnNorm, `${label}/ffn_norm`))
      return
    case 'ffn': {
      const x = ctx.get(V.ffnIn(l))
      const gate = emitLinear(ctx, x, w.wGate, null, `${label}.w_gate`)
      const up = emitLinear(ctx, x, w.wUp, null, `${label}.w_up`)
      // SwiGLU: silu(gate) · up, silu(g) = g · sigmoid(g)
      const silu = b.op('Mul', [gate, b.op('Sigmoid', [gate], { name: `${label}/gate_sigmoid` })], { name: `${label}/gate_silu` })
      const act = b.op('Mul', [silu, up], { name: `${label}/swiglu` })
      const down = emitLinear(ctx, act, w.wDown, null, `${label}.w_down`)
      ctx.set(V.layerOut(l), b.op('Add', [ctx.get(V.residAttn(l)), down], { name: `${label}/ffn_residual` }))
      return
    }
    default:
      throw new Error(`group ${group.kind} has no layer`)
  }
}
