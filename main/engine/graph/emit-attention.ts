/**
 * @file RoPE and causal attention with grouped KV heads over a runtime-owned cache, in the reference's
 * order. Shapes: S = tokens in this run, C = cache capacity (≥ P cached positions), hd = headDim,
 * g = nHeads / nKvHeads. The cache arrives as two graph inputs per layer — keys transposed
 * [nKv, hd, C] and values [nKv, C, hd] — and is only read (never concatenated or copied): the scores
 * against it and against the run's own new rows are computed separately, joined for one softmax, and
 * the two weighted sums added. Capacity past P is masked out, so its contents never matter.
 */
import type { ModelConfig } from '../model'
import type { EmitContext } from './emit-context'
import { MS_DOMAIN } from './onnx-builder'

/**
 * Rotates x [1, S, nHeads·hd] by each row's position with com.microsoft.RotaryEmbedding: 'adjacent'
 * pairs (2j, 2j+1) are its interleaved mode, 'rotate-half' pairs (j, j + ropeDim/2) its default; dims
 * past ropeDim pass through unrotated (rotary_embedding_dim).
 */
export function emitRope(ctx: EmitContext, x: string, nHeads: number, label: string): string {
  const { b, config } = ctx
  const { positionIds, cos, sin } = ctx.ropeInputs()
  return b.op('RotaryEmbedding', [x, positionIds, cos, sin], {
    name: label,
    domain: MS_DOMAIN,
    attrs: {
      interleaved: { int: config.ropePairing === 'adjacent' ? 1 : 0 },
      num_heads: { int: nHeads },
      rotary_embedding_dim: { int: config.ropeDim }
    }
  })
}

/** The values one layer's attention reads. */
export interface AttentionInputs {
  /** rotated queries [1, S, nHeads·hd], already scaled by 1/sqrt(hd) */
  readonly q: string
  /** rotated new keys and new values [1, S, nKv·hd] */
  readonly k: string
  readonly v: string
  /** the cache: keys transposed [nKv, hd, C], values [nKv, C, hd] */
  readonly pastKeys: string
  readonly pastValues: string
}

/** Causal attention for one layer; returns [1, S, nHeads·hd] with head h = kv·g + i reading KV head kv. */
export function emitAttention(ctx: EmitContext, inputs: AttentionInputs, label: string): string {
  const { b, config } = ctx
  const { nHeads, nKvHeads, headDim: hd } = config
  const g = groupSize(config)
  const heads = (x: string, n: number, what: string): string => b.op('Reshape', [x, ctx.i64([-1, n, hd])], { name: `${label}/${what}_heads` })

  // queries grouped by KV head: [S, nKv, g, hd] -> [nKv, g, S, hd] -> [nKv, g·S, hd] (g = 1: [nKv, S, hd])
  let q3: string
  if (g === 1) {
    q3 = b.op('Transpose', [heads(inputs.q, nHeads, 'q')], { name: `${label}/q_by_kv`, attrs: { perm: { ints: [1, 0, 2] } } })
  } else {
    const q4 = b.op('Reshape', [inputs.q, ctx.i64([-1, nKvHeads, g, hd])], { name: `${label}/q_groups` })
    const qt = b.op('Transpose', [q4], { name: `${label}/q_by_kv`, attrs: { perm: { ints: [1, 2, 0, 3] } } })
    q3 = b.op('Reshape', [qt, ctx.i64([nKvHeads, -1, hd])], { name: `${label}/q_rows` })
  }
  const newKeys = b.op('Transpose', [heads(inputs.k, nKvHeads, 'k')], { name: `${label}/new_keys_t`, attrs: { perm: { ints: [1, 2, 0] } } }) // [nKv, hd, S]
  const newValues = b.op('Transpose', [heads(inputs.v, nKvHeads, 'v')], { name: `${label}/new_values`, attrs: { perm: { ints: [1, 0, 2] } } }) // [nKv, S, hd]

  // scores [nKv, g·S, C + S]: cached part (free capacity masked), own part (causal), one softmax
  const past = b.op('MatMul', [q3, inputs.pastKeys], { name: `${label}/past_dots` })
  const own = b.op('MatMul', [q3, newKeys], { name: `${label}/own_dots` })
  const dots = b.op('Concat', [past, own], { name: `${label}/dots`, attrs: { axis: { int: -1 } } })
  // one mask add over the joined dots (the mask [g·S, C + S] is shared by every layer)
  const scores = b.op('Add', [dots, ctx.attentionMask(inputs.pastKeys, g)], { name: `${label}/scores` })
  const probs = b.op('Softmax', [scores], { name: `${label}/probs`, attrs: { axis: { int: -1 } } })
  const [pastProbs, ownProbs] = ctx.splitProbs(probs, inputs.pastKeys, `${label}/probs_split`)

  // weighted values [nKv, g·S, hd] -> [S, nKv, g, hd] -> [1, S, nHeads·hd]
  const mixed = b.op('Add', [
    b.op('MatMul', [pastProbs, inputs.pastValues], { name: `${label}/past_mixed` }),
    b.op('MatMul', [ownProbs, newValues], { name: `${label}/own_mixed` })
  ], { name: `${label}/mixed` })
  let bySeq: string
  if (g === 1) {
    bySeq = b.op('Transpose', [mixed], { name: `${label}/mixed_by_pos`, attrs: { perm: { ints: [1, 0, 2] } } })
  } else {
    const m4 = b.op('Reshape', [mixed, ctx.i64([nKvHeads, g, -1, hd])], { name: `${label}/mixed_groups` })
    bySeq = b.op('Transpose', [m4], { name: `${label}/mixed_by_pos`, attrs: { perm: { ints: [2, 0, 1, 3] } } })
  }
  return b.op('Reshape', [bySeq, ctx.i64([1, -1, nHeads * hd])], { name: `${label}/out` })
}

/** Query heads per KV head. */
export function groupSize(config: ModelConfig): number {
  if (config.nHeads % config.nKvHeads !== 0) throw new Error(`nHeads ${config.nHeads} is not a multiple of nKvHeads ${config.nKvHeads}`)
  return config.nHeads / config.nKvHeads
}
