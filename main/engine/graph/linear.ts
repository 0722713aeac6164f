/**
 * @file y = x · Wᵀ (+ b) for model weights W [N, K]: quantized weights stay quantized as
 * `com.microsoft.MatMulNBits`; dense ones (and int8 groups that do not fit MatMulNBits blocks) become a
 * float32 MatMul initializer [K, N]. Weights reading the same input (Q/K/V, gate/up) are fused into one
 * matmul over their concatenated rows when they share an encoding — one kernel launch instead of three,
 * and the same values, so the results are unchanged.
 */
import { tensorToFloat32, type Tensor } from '../model'
import type { EmitContext, GraphOptions } from './emit-context'
import { MS_DOMAIN } from './onnx-builder'
import { int8GroupsFitNBits, packNBits, type NBitsWeight } from './quant-pack'

/** MatMulNBits accuracy_level: 0 computes in float32; 4 quantizes the input to int8 per weight block. */
const ACCURACY_F32 = 0
const ACCURACY_INT8 = 4

/**
 * The block length along K over which a quantized matmul with weight `t` rounds its input to int8
 * (scale max|x|/127, round half to even — MLAS's CompInt8), or null when it computes in float32. The
 * reference forward takes this to emulate the graph's arithmetic exactly.
 */
export function int8ActivationBlock(t: Tensor, options: GraphOptions): number | null {
  if (options.int8Activations === false || t.shape.length !== 2) return null
  const d = t.data
  const k = t.shape[1]
  if (d.kind === 'dense') return null
  if (d.kind === 'int8-groups') return int8GroupsFitNBits(d.groupSize, k) ? d.groupSize : null
  return d.dtype === 'q6_k' ? 16 : 32
}

/** How a quantized matmul rounds its input to int8 (the shape of reference.ts's Int8ActivationPlan). */
export interface Int8ActivationPlan {
  /** block length along K */
  readonly block: number
  /** Q4_K: per-block mins [K/block, N] applied to the unrounded input; else null */
  readonly minsT: Float32Array | null
}

/**
 * The reference forward's description of how the graph multiplies by `t` (int8 block, and for Q4_K the
 * mins the graph applies to the unrounded input), or null for float32 arithmetic.
 */
export function int8ActivationPlan(t: Tensor, options: GraphOptions): Int8ActivationPlan | null {
  const block = int8ActivationBlock(t, options)
  if (block === null) return null
  const minsT = t.data.kind === 'ggml' && t.data.dtype === 'q4_k' ? (packNBits(t)?.minsT ?? null) : null
  return { block, minsT }
}

/** Transposes W [n, k] (row-major), times `factor`, into columns [off, off + n) of out [k, stride]. */
function transposeInto(out: Float32Array, stride: number, off: number, w: Float32Array, n: number, k: number, factor: number): void {
  for (let r = 0; r < n; r++) {
    const row = r * k
    for (let c = 0; c < k; c++) out[c * stride + off + r] = factor === 1 ? w[row + c] : w[row + c] * factor
  }
}

/** Joins typed arrays end to end into a new one made by `alloc`. */
function concat<T extends Uint8Array | Float32Array>(parts: readonly T[], alloc: (length: number) => T): T {
  const out = alloc(parts.reduce((a, p) => a + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

const concatBytes = (parts: readonly Uint8Array[]): Uint8Array => concat(parts, (n) => new Uint8Array(n))
const concatFloats = (parts: readonly Float32Array[]): Float32Array => concat(parts, (n) => new Float32Array(n))

/** The weight with every output multiplied by `factor` (scales and mins; the codes are unchanged). */
function scaleNBits(w: NBitsWeight, factor: number): NBitsWeight {
  if (factor === 1) return w
  return {
    ...w,
    scales: w.scales.map((v) => Math.fround(v * factor)),
    minsT: w.minsT ? w.minsT.map((v) => Math.fround(v * factor)) : null
  }
}

/** Stacks packed weights along N (rows are independent in every MatMulNBits array), or null if they differ in form. */
function stackNBits(ws: readonly NBitsWeight[]): NBitsWeight | null {
  const [first] = ws
  const same = ws.every((w) => w.k === first.k && w.bits === first.bits && w.blockSize === first.blockSize && (w.zeroPoints === null) === (first.zeroPoints === null) && (w.minsT === null) === (first.minsT === null))
  if (!same) return null
  if (ws.length === 1) return first
  const n = ws.reduce((a, w) => a + w.n, 0)
  let minsT: Float32Array | null = null
  if (first.minsT) {
    // [nBlocks, N] per weight -> [nBlocks, ΣN]
    const nb = first.k / first.blockSize
    minsT = new Float32Array(nb * n)
    let off = 0
    for (const w of ws) {
      const m = w.minsT
      if (!m) throw new Error('unreachable: mins checked above')
      for (let blk = 0; blk < nb; blk++) minsT.set(m.subarray(blk * w.n, (blk + 1) * w.n), blk * n + off)
      off += w.n
    }
  }
  const zps = ws.map((w) => w.zeroPoints)
  return {
    n,
    k: first.k,
    bits: first.bits,
    blockSize: first.blockSize,
    codes: concatBytes(ws.map((w) => w.codes)),
    scales: concatFloats(ws.map((w) => w.scales)),
    zeroPoints: zps.every((z): z is Uint8Array => z !== null) ? concatBytes(zps) : null,
    minsT
  }
}

function emitNBits(ctx: EmitContext, x: string, packed: NBitsWeight, int8: boolean, label: string): string {
  const b = ctx.b
  const { n, k } = packed
  const nb = k / packed.blockSize
  const codes = b.initializer(`${label}.codes`, 'uint8', [n, nb, (packed.blockSize * packed.bits) / 8], packed.codes)
  const inputs = [x, codes, b.f32(`${label}.scales`, [n * nb], packed.scales)]
  if (packed.zeroPoints) inputs.push(b.initializer(`${label}.zero_points`, 'uint8', [packed.zeroPoints.length], packed.zeroPoints))
  let y = b.op('MatMulNBits', inputs, {
    name: `${label}/matmul_nbits`,
    domain: MS_DOMAIN,
    attrs: {
      K: { int: k },
      N: { int: n },
      bits: { int: packed.bits },
      block_size: { int: packed.blockSize },
      accuracy_level: { int: int8 ? ACCURACY_INT8 : ACCURACY_F32 }
    }
  })
  if (packed.minsT) {
    // Q4_K: subtract Σ_blocks (dmin·m)_{n,b} · Σ_{k in b} x_k, i.e. blockSums(x) [S, nb] · minsT [nb, N]
    const mins = b.f32(`${label}.mins`, [nb, n], packed.minsT)
    const minTerm = b.op('MatMul', [ctx.blockSums(x, k, packed.blockSize), mins], { name: `${label}/mins` })
    y = b.op('Sub', [y, minTerm], { name: `${label}/minus_mins` })
  }
  return y
}

/** y = x · [W₀; W₁; …]ᵀ for weights of one form (all dense, or packed alike): [.., ΣN]. Null when they cannot share one matmul. */
function emitFused(ctx: EmitContext, x: string, ws: readonly Tensor[], factors: readonly number[], label: string): string | null {
  const k = ws[0].shape[1]
  const packed = ws.map((w) => packNBits(w))
  if (packed.every((p): p is NBitsWeight => p !== null)) {
    const blocks = ws.map((w) => int8ActivationBlock(w, ctx.options))
    const stacked = blocks.every((blk) => blk === blocks[0]) ? stackNBits(packed.map((p, i) => scaleNBits(p, factors[i]))) : null
    return stacked ? emitNBits(ctx, x, stacked, blocks[0] !== null, label) : null
  }
  if (!packed.every((p) => p === null)) return null
  const n = ws.reduce((a, w) => a + w.shape[0], 0)
  const wt = new Float32Array(k * n)
  let off = 0
  ws.forEach((w, i) => {
    transposeInto(wt, n, off, tensorToFloat32(w), w.shape[0], k, factors[i])
    off += w.shape[0]
  })
  return ctx.b.op('MatMul', [x, ctx.b.f32(`${label}.weight_t`, [k, n], wt)], { name: `${label}/matmul` })
}

/**
 * Emits x [.., K] · Wᵢᵀ (+ bᵢ), times `factors[i]` (default 1; folded into the weights, so free), for
 * each weight Wᵢ [Nᵢ, K] of `ws` -> one output [.., Nᵢ] each; `labels` name the nodes and initializers
 * (e.g. "layer3.wq"). Fused into one matmul and a Split when the weights share a form, else one matmul each.
 */
export function emitLinears(
  ctx: EmitContext,
  x: string,
  ws: readonly Tensor[],
  biases: readonly (Tensor | null)[],
  labels: readonly string[],
  factors: readonly number[] = ws.map(() => 1)
): string[] {
  const b = ctx.b
  for (const w of ws) {
    if (w.shape.length !== 2 || w.shape[1] !== ws[0].shape[1]) throw new Error(`${w.name}: expected a 2-D weight with ${ws[0].shape[1]} inputs, got [${w.shape.join(', ')}]`)
  }
  biases.forEach((bias, i) => {
    const n = ws[i].shape[0]
    if (bias && (bias.shape.length !== 1 || bias.shape[0] !== n)) throw new Error(`${bias.name}: bias shape [${bias.shape.join(', ')}] does not match ${n} outputs`)
  })
  const biasValues = (i: number): Float32Array => {
    const bias = biases[i]
    const v = bias ? tensorToFloat32(bias) : new Float32Array(ws[i].shape[0])
    return factors[i] === 1 ? v : v.map((e) => e * factors[i])
  }
  const fused = ws.length > 1 ? emitFused(ctx, x, ws, factors, labels.join('+')) : null
  if (!fused) {
    return ws.map((w, i) => {
      const one = emitFused(ctx, x, [w], [factors[i]], labels[i])
      if (!one) throw new Error(`unreachable: a single weight always has one form (${w.name})`)
      return biases[i] ? b.op('Add', [one, b.f32(`${labels[i]}.bias`, [w.shape[0]], biasValues(i))], { name: `${labels[i]}/bias` }) : one
    })
  }
  let y = fused
  if (biases.some((bias) => bias !== null)) {
    const all = concatFloats(ws.map((_, i) => biasValues(i)))
    y = b.op('Add', [y, b.f32(`${labels.join('+')}.bias`, [all.length], all)], { name: `${labels.join('+')}/bias` })
  }
  const sizes = ctx.i64(ws.map((w) => w.shape[0]))
  return b.node('Split', [y, sizes], { name: `${labels.join('+')}/split`, outputCount: ws.length, attrs: { axis: { int: -1 } } })
}

/** Emits x [.., K] · Wᵀ -> [.., N] (+ bias [N]) for one weight. */
export function emitLinear(ctx: EmitContext, x: string, w: Tensor, bias: Tensor | null, label: string): string {
  return emitLinears(ctx, x, [w], [bias], [label])[0]
}
