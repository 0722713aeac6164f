/**
 * @file Where a row partition cuts each weight of a matmul group (W is [N out, K in], so y = x·Wᵀ):
 * - qkv: rows of wq, wk and wv (each cut at the same ratio); the outputs q, k, v are joined by concatenation;
 * - attn-out: rows of wo (output features); each part adds its slice of the residual; joined by concatenation;
 * - ffn: the hidden units — rows of w_gate and w_up and the same columns of w_down — so the two parts'
 *   down projections are partial sums of the whole, joined by adding them (part a adds the residual);
 * - lm-head: rows of the output matrix (vocabulary entries); joined by concatenation.
 * The ffn cut is a multiple of 32 when the hidden width allows: w_down's K axis is MatMulNBits' block axis.
 */
import type { ModelConfig } from '../model'
import type { MatmulGroup } from './placement'

/** A matmul weight by its ModelWeights / LayerWeights field name. */
export type WeightName = 'wq' | 'wk' | 'wv' | 'wo' | 'wGate' | 'wUp' | 'wDown' | 'output'

/** One weight's cut: indices [0, cut) along `axis` on part a, [cut, size) on part b. */
export interface WeightCut {
  readonly weight: WeightName
  /** 0 = rows (output features), 1 = columns (input features) */
  readonly axis: 0 | 1
  readonly size: number
  readonly cut: number
}

/** MatMulNBits block length along K (quant-pack.ts packs every quantized type into 32-wide blocks or 16 for Q6_K). */
const K_BLOCK = 32

/** The granularity of a row cut for this group: ffn cuts w_down's K axis, so whole quantization blocks. */
export function rowSplitUnit(kind: MatmulGroup, config: ModelConfig): number {
  return kind === 'ffn' && config.hiddenDim % K_BLOCK === 0 ? K_BLOCK : 1
}

/** The weights of a matmul group with their split axis and full size along it. */
function splitAxes(kind: MatmulGroup, config: ModelConfig): Array<Omit<WeightCut, 'cut'>> {
  const { dim, hiddenDim, nHeads, nKvHeads, headDim, vocabSize } = config
  switch (kind) {
    case 'qkv':
      return [
        { weight: 'wq', axis: 0, size: nHeads * headDim },
        { weight: 'wk', axis: 0, size: nKvHeads * headDim },
        { weight: 'wv', axis: 0, size: nKvHeads * headDim }
      ]
    case 'attn-out':
      return [{ weight: 'wo', axis: 0, size: dim }]
    case 'ffn':
      return [
        { weight: 'wGate', axis: 0, size: hiddenDim },
        { weight: 'wUp', axis: 0, size: hiddenDim },
        { weight: 'wDown', axis: 1, size: hiddenDim }
      ]
    case 'lm-head':
      return [{ weight: 'output', axis: 0, size: vocabSize }]
  }
}

/**
 * The cuts for `ratio` of the rows on part a (rounded to the group's unit), or a reason when a part would
 * get no rows of some weight.
 */
export function rowCuts(kind: MatmulGroup, ratio: number, config: ModelConfig): WeightCut[] | string {
  const unit = rowSplitUnit(kind, config)
  const cuts: WeightCut[] = []
  for (const w of splitAxes(kind, config)) {
    const cut = Math.round((ratio * w.size) / unit) * unit
    if (cut <= 0 || cut >= w.size) {
      const side = cut <= 0 ? 'the first device' : 'the second device'
      return `ratio ${ratio} leaves ${side} no ${unit > 1 ? `${unit}-wide blocks` : 'rows'} of ${w.weight} (${w.size} ${w.axis === 0 ? 'rows' : 'columns'})`
    }
    cuts.push({ ...w, cut })
  }
  return cuts
}

/** The share of the group's work on part a after rounding (cut elements over all split elements). */
export function rowShareOf(cuts: readonly WeightCut[]): number {
  const total = cuts.reduce((s, c) => s + c.size, 0)
  return total === 0 ? 0 : cuts.reduce((s, c) => s + c.cut, 0) / total
}
