/**
 * @file One part of a row partition: a matmul group's share of its weights, compiled alone on one
 * device while the other part runs elsewhere (the planner's RowSlice has exactly this shape). Per group:
 * - qkv: rows [start, end) of each of wq, wk, wv (and their biases) -> q, k, new_v each [1, S, end − start];
 * - attn-out: rows of wo -> resid_attn [1, S, end − start], plus the residual's matching features ('slice');
 * - ffn: hidden units [start, end) — rows of w_gate and w_up, the same columns of w_down — -> a partial sum
 *   of resid [1, S, dim], plus the whole residual on one part ('whole');
 * - lm-head: vocabulary rows -> logits [1, end − start].
 * The part reads the unsplit group's inputs at full width. A column slice of a quantized weight keeps
 * whole blocks, so with int8 activations each part rounds exactly the input blocks the unsplit matmul
 * rounds for those columns (the same scales), and the parts' partial sums add up to the unsplit result.
 */
import type { LayerWeights, ModelConfig, ModelWeights, Tensor } from '../model'
import type { WeightOperand } from './linear'
import type { GroupKind, OpGroup } from './op-groups'
import { VALUE } from './values'

/** A matmul weight by its ModelWeights / LayerWeights field name. */
export type PartWeightName = 'wq' | 'wk' | 'wv' | 'wo' | 'wGate' | 'wUp' | 'wDown' | 'output'

/** The part of one weight W [N, K] a part holds: indices [start, end) along `axis` (0 = rows, 1 = columns). */
export interface PartWeightRange {
  readonly weight: PartWeightName
  readonly axis: 0 | 1
  readonly start: number
  readonly end: number
}

/** The features [start, end) of an output value's last axis a part produces. */
export interface PartOutputRange {
  readonly value: string
  readonly start: number
  readonly end: number
}

/** One part of a row-partitioned matmul group (structurally the planner's RowSlice). */
export interface GroupPart {
  readonly by: 'rows'
  readonly weights: readonly PartWeightRange[]
  /** per output: the feature range produced (the full width for ffn's partial sums) */
  readonly outputs: readonly PartOutputRange[]
  /** 'slice': add the residual's features [start, end) (attn-out); 'whole': add all of it (ffn); 'none' */
  readonly residual: 'slice' | 'whole' | 'none'
}

/** Each matmul group's weights with the axis a row partition cuts, and the residuals it may take. */
const GROUP_LAYOUT: Readonly<Partial<Record<GroupKind, { weights: ReadonlyArray<{ weight: PartWeightName; axis: 0 | 1 }>; residuals: readonly GroupPart['residual'][] }>>> = {
  qkv: { weights: [{ weight: 'wq', axis: 0 }, { weight: 'wk', axis: 0 }, { weight: 'wv', axis: 0 }], residuals: ['none'] },
  'attn-out': { weights: [{ weight: 'wo', axis: 0 }], residuals: ['slice', 'none'] },
  ffn: { weights: [{ weight: 'wGate', axis: 0 }, { weight: 'wUp', axis: 0 }, { weight: 'wDown', axis: 1 }], residuals: ['whole', 'none'] },
  'lm-head': { weights: [{ weight: 'output', axis: 0 }], residuals: ['none'] }
}

/** The output value a row-sliced weight's rows produce (ffn's sliced weights all feed one partial sum). */
export function partOutputOf(weight: PartWeightName, layer: number): string {
  switch (weight) {
    case 'wq':
      return VALUE.q(layer)
    case 'wk':
      return VALUE.k(layer)
    case 'wv':
      return VALUE.newV(layer)
    case 'wo':
      return VALUE.residAttn(layer)
    case 'output':
      return VALUE.logits
    default:
      return VALUE.layerOut(layer)
  }
}

/** The outputs a consistent part of `group` produces, derived from its weight ranges. */
function expectedOutputs(config: ModelConfig, group: OpGroup, part: GroupPart): PartOutputRange[] {
  const layer = group.layer ?? -1
  if (group.kind === 'ffn') return [{ value: VALUE.layerOut(layer), start: 0, end: config.dim }]
  return part.weights.map((w) => ({ value: partOutputOf(w.weight, layer), start: w.start, end: w.end }))
}

const fmt = (r: { start: number; end: number }): string => `[${r.start}, ${r.end})`

/**
 * Throws a clear error unless `part` is a consistent part of `group`: exactly the group's weights, each
 * once on its split axis (ffn: one hidden range for all three), the outputs its ranges produce, and a
 * residual the group can take. Ranges are checked against the weights when they are sliced.
 */
export function checkGroupPart(config: ModelConfig, group: OpGroup, part: GroupPart): void {
  const where = `${group.layer === null ? 'final' : `layer ${group.layer}`} ${group.kind} part`
  const layout = GROUP_LAYOUT[group.kind]
  if (!layout) throw new Error(`${where}: only matmul groups (qkv, attn-out, ffn, lm-head) can be split by rows`)
  if (part.by !== 'rows') throw new Error(`${where}: expected a row part, got by '${String(part.by)}'`)
  const names = part.weights.map((w) => `${w.weight}/${w.axis}`).sort()
  const wanted = layout.weights.map((w) => `${w.weight}/${w.axis}`).sort()
  if (names.join() !== wanted.join()) throw new Error(`${where}: weights (weight/axis) must be ${wanted.join(', ')}; got ${names.join(', ') || 'none'}`)
  if (group.kind === 'ffn' && part.weights.some((w) => w.start !== part.weights[0].start || w.end !== part.weights[0].end)) {
    throw new Error(`${where}: w_gate, w_up rows and w_down columns must cover the same hidden units; got ${part.weights.map((w) => `${w.weight} ${fmt(w)}`).join(', ')}`)
  }
  if (!layout.residuals.includes(part.residual)) throw new Error(`${where}: residual '${part.residual}' is not one of ${layout.residuals.join(', ')}`)
  const want = expectedOutputs(config, group, part)
  const key = (o: PartOutputRange): string => `${o.value} ${fmt(o)}`
  const got = part.outputs.map(key).sort()
  const expected = want.map(key).sort()
  if (got.join() !== expected.join()) throw new Error(`${where}: outputs must be ${expected.join(', ')}; got ${got.join(', ') || 'none'}`)
}

/** The tensor of a matmul weight name (and its bias for wq/wk/wv). */
function weightTensor(weights: ModelWeights, layer: number | null, name: PartWeightName): { w: Tensor; bias: Tensor | null } {
  if (name === 'output') return { w: weights.output, bias: null }
  if (layer === null) throw new Error(`${name} needs a layer`)
  const lw: LayerWeights = weights.layers[layer]
  const bias = name === 'wq' ? lw.bq : name === 'wk' ? lw.bk : name === 'wv' ? lw.bv : null
  return { w: lw[name], bias }
}

/**
 * The operands for a group's weights: whole tensors without a part, else each weight's slice (and its
 * bias's matching entries); also the part's residual treatment and the range of the sliced rows by weight.
 */
export function partOperands(
  weights: ModelWeights,
  layer: number | null,
  part: GroupPart | null
): (name: PartWeightName) => { w: WeightOperand; bias: WeightOperand | null; range: { start: number; end: number } | null } {
  return (name) => {
    const { w, bias } = weightTensor(weights, layer, name)
    const r = part?.weights.find((x) => x.weight === name)
    if (!r) return { w, bias, range: null }
    return {
      w: { tensor: w, axis: r.axis, start: r.start, end: r.end },
      bias: bias && { tensor: bias, axis: 0, start: r.start, end: r.end },
      range: { start: r.start, end: r.end }
    }
  }
}
