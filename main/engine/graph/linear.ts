/**
 * @file y = x · Wᵀ (+ b) for model weights W [N, K]: quantized weights stay quantized as
 * `com.microsoft.MatMulNBits`; dense ones (and int8 groups that do not fit MatMulNBits blocks) become a
 * float32 MatMul initializer [K, N]. Weights reading the same input (Q/K/V, gate/up) are fused into one
 * matmul over their concatenated rows when they share an encoding — one kernel launch instead of three,
 * and the same values, so the results are unchanged.
 */
import { dequantizeRows, quantizePerChannel, tensorToFloat32, w8a8OutputScales, type Int8Rounding, type Tensor } from '../model'
import type { EmitContext, GraphOptions } from './emit-context'
import { MS_DOMAIN } from './onnx-builder'
import { int8GroupsFitNBits, packNBits, sliceNBitsCols, sliceNBitsRows, type NBitsWeight } from './quant-pack'

/**
 * MatMulNBits accuracy_level: 0 computes in float32; 4 quantizes the input to int8 per weight block.
 * Level 4 is also the fastest form for prefill chunks, so one graph serves both phases. Measured on a
 * 2-core AVX-512 VNNI host at M = 128 (one 110M layer, CPU time, onnxruntime 1.30): level 4 runs
 * ~1.1× faster than float32 SGEMM over weights dequantized in advance, and ~1.2× faster than level 0,
 * which for 8-bit weights dequantizes all of B on every run (whole-model prefill 0.4× of level 4);
 * DequantizeLinear (blocked) + MatMul is fused back into MatMulNBits by ORT, and unfused it runs
 * 1.5–2× slower (a full dequantization per run). At M = 512 level 4 and SGEMM are even.
 * Level 4 costs memory: MLAS's packed form keeps per-block float sums beside the codes (a session over
 * 40 MB of 4-bit codes held 61 MB after a run at level 4, 45 MB at level 0).
 */
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

/**
 * The reference forward's description of how the graph multiplies by `t` (int8 block, and for Q4_K the
 * mins the graph applies to the unrounded input), or null for float32 arithmetic.
 */
export function int8RoundingOf(t: Tensor, options: GraphOptions): Int8Rounding | null {
  const block = int8ActivationBlock(t, options)
  if (block === null) return null
  const minsT = t.data.kind === 'ggml' && t.data.dtype === 'q4_k' ? (packNBits(t)?.minsT ?? null) : null
  return { block, minsT }
}

/** Side of the square tiles transposeInto walks: a tile's rows and columns both stay in cache. */
const TRANSPOSE_TILE = 64

/**
 * Transposes W [n, k] (row-major), times `factor`, into columns [off, off + n) of out [k, stride]. Tile by
 * tile: a plain row-by-row walk writes each value `stride` floats from the last (a cache miss per value), and
 * a 262k-row output projection took minutes.
 */
function transposeInto(out: Float32Array, stride: number, off: number, w: Float32Array, n: number, k: number, factor: number): void {
  for (let r0 = 0; r0 < n; r0 += TRANSPOSE_TILE) {
    const r1 = Math.min(n, r0 + TRANSPOSE_TILE)
    for (let c0 = 0; c0 < k; c0 += TRANSPOSE_TILE) {
      const c1 = Math.min(k, c0 + TRANSPOSE_TILE)
      for (let c = c0; c < c1; c++) {
        const dst = c * stride + off
        for (let r = r0; r < r1; r++) out[dst + r] = w[r * k + c] * factor
      }
    }
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

/**
 * A weight operand: a model tensor W [N, K], or rows (axis 0: output features) / columns (axis 1: input
 * features) [start, end) of one — a partition part's share. A 1-D tensor (a bias) is sliced along axis 0.
 */
export interface WeightSlice {
  readonly tensor: Tensor
  readonly axis: 0 | 1
  readonly start: number
  readonly end: number
}

/** A whole model tensor or a slice of one. */
export type WeightOperand = Tensor | WeightSlice

/** What emitting a matmul needs to know about one (possibly sliced) weight W [n, k]. */
interface Operand {
  readonly name: string
  readonly n: number
  readonly k: number
  /** MatMulNBits form, or null for a float MatMul */
  readonly packed: NBitsWeight | null
  /** the int8 input-rounding block along K (the whole tensor's: a column slice keeps whole blocks), or null */
  readonly block: number | null
  /** row-major float32 [n, k] (float weights) */
  dense(): Float32Array
}

/** Throws unless [start, end) is a non-empty range inside [0, size). */
function checkSlice(t: Tensor, size: number, start: number, end: number, what: string): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end > size || start >= end) {
    throw new RangeError(`${t.name}: ${what} [${start}, ${end}) is not a non-empty range inside [0, ${size})`)
  }
}

function operandOf(w: WeightOperand, options: GraphOptions): Operand {
  const t = 'tensor' in w ? w.tensor : w
  if (t.shape.length !== 2) throw new Error(`${t.name}: expected a 2-D weight, got shape [${t.shape.join(', ')}]`)
  const [n, k] = t.shape
  const packed = packNBits(t)
  const block = int8ActivationBlock(t, options)
  if (!('tensor' in w)) return { name: t.name, n, k, packed, block, dense: () => tensorToFloat32(t) }
  const { start, end } = w
  if (w.axis === 0) {
    checkSlice(t, n, start, end, 'rows')
    const dense = (): Float32Array => {
      const out = new Float32Array((end - start) * k)
      dequantizeRows(t, start, end - start, out)
      return out
    }
    return { name: t.name, n: end - start, k, packed: packed && sliceNBitsRows(packed, start, end), block, dense }
  }
  checkSlice(t, k, start, end, 'columns')
  const dense = (): Float32Array => {
    const all = tensorToFloat32(t)
    const m = end - start
    const out = new Float32Array(n * m)
    for (let r = 0; r < n; r++) out.set(all.subarray(r * k + start, r * k + end), r * m)
    return out
  }
  return { name: t.name, n, k: end - start, packed: packed && sliceNBitsCols(packed, start, end, t.name), block, dense }
}

/** A bias vector (or its slice [start, end)) as float32. */
function biasOf(b: WeightOperand): { name: string; values: Float32Array } {
  const t = 'tensor' in b ? b.tensor : b
  if (t.shape.length !== 1) throw new Error(`${t.name}: expected a 1-D bias, got shape [${t.shape.join(', ')}]`)
  const all = tensorToFloat32(t)
  if (!('tensor' in b)) return { name: t.name, values: all }
  if (b.axis !== 0) throw new Error(`${t.name}: a bias can only be sliced along axis 0`)
  checkSlice(t, t.shape[0], b.start, b.end, 'entries')
  return { name: t.name, values: all.subarray(b.start, b.end) }
}

/** y = x · [W₀; W₁; …]ᵀ for weights of one form (all dense, or packed alike): [.., ΣN]. Null when they cannot share one matmul. */
function emitFused(ctx: EmitContext, x: string, ws: readonly Operand[], factors: readonly number[], label: string): string | null {
  const k = ws[0].k
  const packed = ws.map((w) => w.packed)
  if (packed.every((p): p is NBitsWeight => p !== null)) {
    const blocks = ws.map((w) => w.block)
    const stacked = blocks.every((blk) => blk === blocks[0]) ? stackNBits(packed.map((p, i) => scaleNBits(p, factors[i]))) : null
    return stacked ? emitNBits(ctx, x, stacked, blocks[0] !== null, label) : null
  }
  if (!packed.every((p) => p === null)) return null
  const n = ws.reduce((a, w) => a + w.n, 0)
  const wt = new Float32Array(k * n)
  let off = 0
  ws.forEach((w, i) => {
    transposeInto(wt, n, off, w.dense(), w.n, k, factors[i])
    off += w.n
  })
  return ctx.b.op('MatMul', [x, ctx.b.f32(`${label}.weight_t`, [k, n], wt)], { name: `${label}/matmul` })
}

/**
 * x [.., K] · Wᵀ as an integer NPU computes it (model/w8a8.ts): x quantized per tensor at the calibrated
 * `activationScale` (QuantizeLinear), the int8 weight quantized per output channel (MatMulInteger), the int32
 * sums times sx · sw (· factor) in float32 (DequantizeLinear per output channel).
 *
 * The activations are uint8 with zero point 128, the form QDQ NPU toolchains use for activations: the same
 * values as int8 (saturate(round(x / sx) + 128) − 128 = saturate(round(x / sx)) to −128..127), and on the CPU
 * MLAS multiplies u8 × s8 about 4× faster than s8 × s8 (256 × 768 × 768: 3.1 vs 12.3 ms on one core).
 */
function emitW8A8(ctx: EmitContext, x: string, w: Operand, activationScale: number, factor: number, label: string): string {
  const b = ctx.b
  const weight = quantizePerChannel(w.dense(), w.n, w.k)
  const wT = new Int8Array(w.k * w.n)
  for (let i = 0; i < w.n; i++) for (let k = 0; k < w.k; k++) wT[k * w.n + i] = weight.values[i * w.k + k]
  const scales = w8a8OutputScales({ weight, activationScale })
  const zero = ctx.once('w8a8:activation_zero_point', () => b.initializer('w8a8.activation_zero_point', 'uint8', [], Uint8Array.of(ACTIVATION_ZERO_POINT)))
  const q = b.op('QuantizeLinear', [x, b.f32(`${label}.sx`, [], Float32Array.of(activationScale)), zero], { name: `${label}/quantize` })
  const acc = b.op('MatMulInteger', [q, b.initializer(`${label}.weight_int8_t`, 'int8', [w.k, w.n], new Uint8Array(wT.buffer)), zero], { name: `${label}/matmul_integer` })
  // int32 sums times sx · sw per output channel: DequantizeLinear's per-axis form (an NPU's op, where Cast is not)
  const outScales = b.f32(`${label}.out_scales`, [w.n], factor === 1 ? scales : scales.map((s) => Math.fround(s * factor)))
  return b.op('DequantizeLinear', [acc, outScales], { name: `${label}/dequantize`, attrs: { axis: { int: -1 } } })
}

/** W8A8 activations are uint8 offset by this (see emitW8A8). */
const ACTIVATION_ZERO_POINT = 128

/** The activation scales of `ws` under W8A8, or null when the graph has none; refuses a part-covered group. */
function w8a8Scales(ctx: EmitContext, weights: readonly WeightOperand[]): number[] | null {
  const table = ctx.options.w8a8 ?? null
  if (table === null) return null
  const names = weights.map((w) => ('tensor' in w ? w.tensor : w).name)
  const scales = names.map((n) => table[n])
  if (scales.every((s) => s === undefined)) return null
  const missing = names.filter((_, i) => scales[i] === undefined)
  if (missing.length > 0) throw new Error(`W8A8: no activation scale for ${missing.join(', ')}`)
  if (weights.some((w) => 'tensor' in w)) throw new Error(`W8A8 takes whole weights, not partition parts (${names.join(', ')})`)
  return scales.map((s) => s ?? 0)
}

/**
 * Emits x [.., K] · Wᵢᵀ (+ bᵢ), times `factors[i]` (default 1; folded into the weights, so free), for
 * each weight Wᵢ [Nᵢ, K] of `ws` (whole tensors or slices) -> one output [.., Nᵢ] each; `labels` name the
 * nodes and initializers (e.g. "layer3.wq"). Fused into one matmul and a Split when the weights share a
 * form, else one matmul each.
 */
export function emitLinears(
  ctx: EmitContext,
  x: string,
  weights: readonly WeightOperand[],
  biases: readonly (WeightOperand | null)[],
  labels: readonly string[],
  factors: readonly number[] = weights.map(() => 1)
): string[] {
  const b = ctx.b
  const ws = weights.map((w) => operandOf(w, ctx.options))
  for (const w of ws) {
    if (w.k !== ws[0].k) throw new Error(`${w.name}: expected ${ws[0].k} inputs, got ${w.k}`)
  }
  const bs = biases.map((bias, i) => {
    if (!bias) return null
    const v = biasOf(bias)
    if (v.values.length !== ws[i].n) throw new Error(`${v.name}: bias of ${v.values.length} entries does not match ${ws[i].n} outputs`)
    return v.values
  })
  const biasValues = (i: number): Float32Array => {
    const v = bs[i] ?? new Float32Array(ws[i].n)
    return factors[i] === 1 ? v : v.map((e) => e * factors[i])
  }
  const w8a8 = w8a8Scales(ctx, weights)
  if (w8a8 !== null) {
    return ws.map((w, i) => {
      const y = emitW8A8(ctx, x, w, w8a8[i], factors[i], labels[i])
      return bs[i] ? b.op('Add', [y, b.f32(`${labels[i]}.bias`, [w.n], biasValues(i))], { name: `${labels[i]}/bias` }) : y
    })
  }
  const fused = ws.length > 1 ? emitFused(ctx, x, ws, factors, labels.join('+')) : null
  if (!fused) {
    return ws.map((w, i) => {
      const one = emitFused(ctx, x, [w], [factors[i]], labels[i])
      if (!one) throw new Error(`unreachable: a single weight always has one form (${w.name})`)
      return bs[i] ? b.op('Add', [one, b.f32(`${labels[i]}.bias`, [w.n], biasValues(i))], { name: `${labels[i]}/bias` }) : one
    })
  }
  let y = fused
  if (bs.some((bias) => bias !== null)) {
    const all = concatFloats(ws.map((_, i) => biasValues(i)))
    y = b.op('Add', [y, b.f32(`${labels.join('+')}.bias`, [all.length], all)], { name: `${labels.join('+')}/bias` })
  }
  const sizes = ctx.i64(ws.map((w) => w.n))
  return b.node('Split', [y, sizes], { name: `${labels.join('+')}/split`, outputCount: ws.length, attrs: { axis: { int: -1 } } })
}

/** Emits x [.., K] · Wᵀ -> [.., N] (+ bias [N]) for one weight (or slice). */
export function emitLinear(ctx: EmitContext, x: string, w: WeightOperand, bias: WeightOperand | null, label: string): string {
  return emitLinears(ctx, x, [w], [bias], [label])[0]
}
