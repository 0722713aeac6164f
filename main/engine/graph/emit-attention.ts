/**
 * @file RoPE and causal attention with grouped KV heads, from plain ONNX ops, in the reference's order.
 * Shapes: S = tokens in this run, P = cached positions, T = P + S, hd = headDim, g = nHeads / nKvHeads.
 */
import type { ModelConfig } from '../model'
import type { EmitContext } from './emit-context'

/**
 * Rotates x [S, nHeads, hd] by each row's position. 'rotate-half' pairs (j, j + ropeDim/2), 'adjacent'
 * pairs (2j, 2j+1); dims past ropeDim pass through unrotated. `output` names the result (graph outputs
 * use fixed names).
 */
export function emitRope(ctx: EmitContext, x: string, nHeads: number, label: string, output?: string): string {
  const { b, config } = ctx
  const hd = config.headDim
  const rd = config.ropeDim
  const half = rd / 2
  const { cos, sin } = ctx.ropeCosSin() // [S, half]
  const outputs = output ? { outputs: [output] } : {}

  // split off the rotated part [S, H, rd] and the pass-through part [S, H, hd - rd]
  let rotated = x
  let passThrough: string | null = null
  if (rd < hd) {
    ;[rotated, passThrough] = b.node('Split', [x, ctx.i64([rd, hd - rd])], { name: `${label}/split_rot`, outputCount: 2, attrs: { axis: { int: 2 } } })
  }

  let result: string
  if (config.ropePairing === 'rotate-half') {
    const [x1, x2] = b.node('Split', [rotated, ctx.i64([half, half])], { name: `${label}/halves`, outputCount: 2, attrs: { axis: { int: 2 } } })
    const c = ctx.once('rope:cos3', () => b.op('Unsqueeze', [cos, ctx.i64([1])], { name: 'rope/cos_heads' })) // [S, 1, half]
    const s = ctx.once('rope:sin3', () => b.op('Unsqueeze', [sin, ctx.i64([1])], { name: 'rope/sin_heads' }))
    // first' = x1·cos − x2·sin ; second' = x1·sin + x2·cos
    const first = b.op('Sub', [b.op('Mul', [x1, c]), b.op('Mul', [x2, s])], { name: `${label}/first` })
    const second = b.op('Add', [b.op('Mul', [x1, s]), b.op('Mul', [x2, c])], { name: `${label}/second` })
    const parts = passThrough ? [first, second, passThrough] : [first, second]
    result = b.op('Concat', parts, { name: `${label}/rotated`, attrs: { axis: { int: 2 } }, ...outputs })
  } else {
    // view [S, H, half, 2] so each pair sits on the last axis
    const pairs = b.op('Reshape', [rotated, ctx.i64([0, nHeads, half, 2])], { name: `${label}/pairs` })
    const [a, c0] = b.node('Split', [pairs, ctx.i64([1, 1])], { name: `${label}/pair_split`, outputCount: 2, attrs: { axis: { int: 3 } } })
    const c = ctx.once('rope:cos4', () => b.op('Unsqueeze', [cos, ctx.i64([1, 3])], { name: 'rope/cos_pairs' })) // [S, 1, half, 1]
    const s = ctx.once('rope:sin4', () => b.op('Unsqueeze', [sin, ctx.i64([1, 3])], { name: 'rope/sin_pairs' }))
    const even = b.op('Sub', [b.op('Mul', [a, c]), b.op('Mul', [c0, s])], { name: `${label}/even` })
    const odd = b.op('Add', [b.op('Mul', [a, s]), b.op('Mul', [c0, c])], { name: `${label}/odd` })
    const joined = b.op('Concat', [even, odd], { name: `${label}/pairs_rotated`, attrs: { axis: { int: 3 } } })
    if (passThrough) {
      const flat = b.op('Reshape', [joined, ctx.i64([0, nHeads, rd])], { name: `${label}/rotated_part` })
      result = b.op('Concat', [flat, passThrough], { name: `${label}/rotated`, attrs: { axis: { int: 2 } }, ...outputs })
    } else {
      result = b.op('Reshape', [joined, ctx.i64([0, nHeads, hd])], { name: `${label}/rotated`, ...outputs })
    }
  }
  return result
}

/**
 * Causal attention for one layer. q [S, nHeads, hd]; newK/newV [S, nKv, hd]; pastK/pastV [P, nKv, hd]
 * (position-major, as the runtime's cache). Returns [S, nHeads·hd] with head h = kv·g + i reading KV
 * head kv (the reference's h / g).
 */
export function emitAttention(
  ctx: EmitContext,
  q: string,
  newK: string,
  newV: string,
  pastK: string,
  pastV: string,
  label: string
): string {
  const { b, config } = ctx
  const { nHeads, nKvHeads, headDim: hd } = config
  const g = groupSize(config)
  const keys = b.op('Concat', [pastK, newK], { name: `${label}/keys`, attrs: { axis: { int: 0 } } }) // [T, nKv, hd]
  const values = b.op('Concat', [pastV, newV], { name: `${label}/values`, attrs: { axis: { int: 0 } } })

  // queries grouped by KV head: [S, nKv, g, hd] -> [nKv, g, S, hd] -> [nKv, g·S, hd]
  const q4 = b.op('Reshape', [q, ctx.i64([0, nKvHeads, g, hd])], { name: `${label}/q_groups` })
  const qt = b.op('Transpose', [q4], { name: `${label}/q_by_kv`, attrs: { perm: { ints: [1, 2, 0, 3] } } })
  const q3 = b.op('Reshape', [qt, ctx.i64([nKvHeads, -1, hd])], { name: `${label}/q_rows` })
  const kt = b.op('Transpose', [keys], { name: `${label}/keys_t`, attrs: { perm: { ints: [1, 2, 0] } } }) // [nKv, hd, T]
  const vt = b.op('Transpose', [values], { name: `${label}/values_t`, attrs: { perm: { ints: [1, 0, 2] } } }) // [nKv, T, hd]

  // scores [nKv, g·S, T] = (q · kᵀ) / sqrt(hd), masked, softmax over keys
  const dots = b.op('MatMul', [q3, kt], { name: `${label}/dots` })
  const scaled = b.op('Mul', [dots, ctx.f32Scalar(1 / Math.sqrt(hd))], { name: `${label}/scores` })
  const masked = b.op('Add', [scaled, ctx.causalMask(keys, g)], { name: `${label}/masked` })
  const probs = b.op('Softmax', [masked], { name: `${label}/probs`, attrs: { axis: { int: -1 } } })

  // weighted values [nKv, g·S, hd] -> [nKv, g, S, hd] -> [S, nKv, g, hd] -> [S, nHeads·hd]
  const mixed = b.op('MatMul', [probs, vt], { name: `${label}/mixed` })
  const m4 = b.op('Reshape', [mixed, ctx.i64([nKvHeads, g, -1, hd])], { name: `${label}/mixed_groups` })
  const mt = b.op('Transpose', [m4], { name: `${label}/mixed_by_pos`, attrs: { perm: { ints: [2, 0, 1, 3] } } })
  return b.op('Reshape', [mt, ctx.i64([-1, nHeads * hd])], { name: `${label}/out` })
}

/** Query heads per KV head. */
export function groupSize(config: ModelConfig): number {
  if (config.nHeads % config.nKvHeads !== 0) throw new Error(`nHeads ${config.nHeads} is not a multiple of nKvHeads ${config.nKvHeads}`)
  return config.nHeads / config.nKvHeads
}
