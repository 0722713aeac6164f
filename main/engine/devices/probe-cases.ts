/**
 * @file The tiny probe graphs and their plain-JS answers: a MatMul + Add (dynamic batch), then one graph per
 * contrib op the engine's graphs use (CONTRIB_OPS). Each case builds ONNX bytes with the graph layer's
 * builder and computes the expected outputs in float64 JS, so a device is only called ready for a graph
 * when it ran it *and* got the right numbers. Sizes are a few dozen floats: these check placement and
 * correctness, not speed.
 */
import { GraphBuilder, MS_DOMAIN } from '../graph'
import type { ContribOp } from './device'

/** Largest |ORT − JS| accepted: inputs are O(1), outputs O(1..10), float32 accumulation over ≤ 32 terms. */
export const PROBE_TOLERANCE = 1e-3

/** One run of a probe graph: float32 feeds and the expected float32 output. */
export interface ProbeRun {
  readonly feeds: Readonly<Record<string, { readonly data: Float32Array; readonly dims: readonly number[] }>>
  readonly expected: Float32Array
}

/** A probe graph with its runs. */
export interface ProbeCase {
  readonly name: 'MatMul+Add' | ContribOp
  readonly bytes: Uint8Array
  /** the graph output compared with `expected` */
  readonly output: string
  readonly runs: readonly ProbeRun[]
}

const PRODUCER = 'tandem-device-probe'

/** Deterministic values in [-1, 1) (LCG), so probe failures reproduce. */
function values(n: number, seed: number): Float32Array {
  const out = new Float32Array(n)
  let s = seed >>> 0
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    out[i] = s / 2 ** 31 - 1
  }
  return out
}

/** y [m, n] = x [m, k] · w [k, n] + bias [n] */
function matmulAdd(x: Float32Array, w: Float32Array, bias: Float32Array, m: number, k: number, n: number): Float32Array {
  const y = new Float32Array(m * n)
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let acc = bias[j]
      for (let t = 0; t < k; t++) acc += x[i * k + t] * w[t * n + j]
      y[i * n + j] = acc
    }
  }
  return y
}

/** rows of `dim` values: x / sqrt(mean(x²) + eps) · scale */
function rmsNorm(x: Float32Array, scale: Float32Array, dim: number, eps: number): Float32Array {
  const y = new Float32Array(x.length)
  for (let r = 0; r < x.length / dim; r++) {
    let ss = 0
    for (let i = 0; i < dim; i++) ss += x[r * dim + i] ** 2
    const inv = 1 / Math.sqrt(ss / dim + eps)
    for (let i = 0; i < dim; i++) y[r * dim + i] = x[r * dim + i] * inv * scale[i]
  }
  return y
}

/** MatMul + Add with a dynamic ('batch') or fixed first dimension; the dynamic graph runs at two batch sizes. */
export function matmulAddCase(dynamic: boolean): ProbeCase {
  const k = 8
  const n = 4
  const w = values(k * n, 1)
  const bias = values(n, 2)
  const batches = dynamic ? [1, 3] : [3]
  const b = new GraphBuilder('probe_matmul_add')
  const x = b.input('X', 'float32', [dynamic ? 'batch' : 3, k])
  const y = b.op('Add', [b.op('MatMul', [x, b.f32('W', [k, n], w)]), b.f32('B', [n], bias)], { outputs: ['Y'] })
  b.output(y, 'float32', [dynamic ? 'batch' : 3, n])
  return {
    name: 'MatMul+Add',
    bytes: b.toBytes(PRODUCER),
    output: 'Y',
    runs: batches.map((m, i) => {
      const xs = values(m * k, 10 + i)
      return { feeds: { X: { data: xs, dims: [m, k] } }, expected: matmulAdd(xs, w, bias, m, k, n) }
    })
  }
}

/** com.microsoft.MatMulNBits, 4-bit, block 32, default zero point 8: y [2, 4] = a [2, 32] · dequant(B)ᵀ. */
export function matMulNBitsCase(): ProbeCase {
  const m = 2
  const k = 32
  const n = 4
  const codes = new Uint8Array(n * k) // one 4-bit code per weight before packing
  for (let i = 0; i < codes.length; i++) codes[i] = (i * 7 + 3) % 16
  const scales = Float32Array.from(values(n, 3), (v) => 0.05 + Math.abs(v) * 0.1)
  const packed = new Uint8Array((n * k) / 2) // [N, 1 block, 16 bytes], low nibble first
  for (let i = 0; i < packed.length; i++) packed[i] = codes[2 * i] | (codes[2 * i + 1] << 4)
  const wT = new Float32Array(k * n) // dequantized, [K, N] for matmulAdd
  for (let row = 0; row < n; row++) for (let c = 0; c < k; c++) wT[c * n + row] = (codes[row * k + c] - 8) * scales[row]
  const a = values(m * k, 4)
  const b = new GraphBuilder('probe_matmulnbits')
  const x = b.input('A', 'float32', [m, k])
  const qb = b.initializer('B', 'uint8', [n, 1, 16], packed)
  const sc = b.f32('scales', [n], scales)
  const y = b.op('MatMulNBits', [x, qb, sc], {
    domain: MS_DOMAIN,
    outputs: ['Y'],
    attrs: { K: { int: k }, N: { int: n }, bits: { int: 4 }, block_size: { int: 32 } }
  })
  b.output(y, 'float32', [m, n])
  return { name: 'MatMulNBits', bytes: b.toBytes(PRODUCER), output: 'Y', runs: [{ feeds: { A: { data: a, dims: [m, k] } }, expected: matmulAdd(a, wT, new Float32Array(n), m, k, n) }] }
}

/** SimplifiedLayerNormalization (RMSNorm, default domain) over the last axis of X [2, 8]. */
export function simplifiedLayerNormCase(): ProbeCase {
  const dim = 8
  const eps = 1e-5
  const scale = values(dim, 5)
  const xs = values(2 * dim, 6)
  const b = new GraphBuilder('probe_simplified_layer_norm')
  const x = b.input('X', 'float32', [2, dim])
  const y = b.op('SimplifiedLayerNormalization', [x, b.f32('scale', [dim], scale)], { outputs: ['Y'], attrs: { axis: { int: -1 }, epsilon: { float: eps } } })
  b.output(y, 'float32', [2, dim])
  return { name: 'SimplifiedLayerNormalization', bytes: b.toBytes(PRODUCER), output: 'Y', runs: [{ feeds: { X: { data: xs, dims: [2, dim] } }, expected: rmsNorm(xs, scale, dim, eps) }] }
}

/** com.microsoft.SkipSimplifiedLayerNormalization: RMSNorm(input + skip) · gamma on [1, 2, 8]. */
export function skipSimplifiedLayerNormCase(): ProbeCase {
  const dim = 8
  const eps = 1e-5
  const gamma = values(dim, 7)
  const xs = values(2 * dim, 8)
  const skip = values(2 * dim, 9)
  const b = new GraphBuilder('probe_skip_simplified_layer_norm')
  const x = b.input('X', 'float32', [1, 2, dim])
  const s = b.input('S', 'float32', [1, 2, dim])
  const y = b.op('SkipSimplifiedLayerNormalization', [x, s, b.f32('gamma', [dim], gamma)], { domain: MS_DOMAIN, outputs: ['Y'], attrs: { epsilon: { float: eps } } })
  b.output(y, 'float32', [1, 2, dim])
  const sum = xs.map((v, i) => v + skip[i])
  return {
    name: 'SkipSimplifiedLayerNormalization',
    bytes: b.toBytes(PRODUCER),
    output: 'Y',
    runs: [{ feeds: { X: { data: xs, dims: [1, 2, dim] }, S: { data: skip, dims: [1, 2, dim] } }, expected: rmsNorm(sum, gamma, dim, eps) }]
  }
}

/** com.microsoft.RotaryEmbedding (rotate-half pairing) of x [1, 3, 2 heads · 4] at positions 2, 3, 4. */
export function rotaryEmbeddingCase(): ProbeCase {
  const heads = 2
  const hd = 4
  const seq = 3
  const maxPos = 8
  const positions = [2, 3, 4]
  const cos = new Float32Array(maxPos * (hd / 2))
  const sin = new Float32Array(maxPos * (hd / 2))
  for (let p = 0; p < maxPos; p++) {
    for (let j = 0; j < hd / 2; j++) {
      const angle = p / 10000 ** ((2 * j) / hd)
      cos[p * (hd / 2) + j] = Math.cos(angle)
      sin[p * (hd / 2) + j] = Math.sin(angle)
    }
  }
  const xs = values(seq * heads * hd, 11)
  const expected = new Float32Array(xs.length)
  for (let s = 0; s < seq; s++) {
    for (let h = 0; h < heads; h++) {
      const o = (s * heads + h) * hd
      for (let j = 0; j < hd / 2; j++) {
        const c = cos[positions[s] * (hd / 2) + j]
        const si = sin[positions[s] * (hd / 2) + j]
        const x1 = xs[o + j]
        const x2 = xs[o + j + hd / 2]
        expected[o + j] = x1 * c - x2 * si
        expected[o + j + hd / 2] = x2 * c + x1 * si
      }
    }
  }
  const b = new GraphBuilder('probe_rotary_embedding')
  const x = b.input('X', 'float32', [1, seq, heads * hd])
  const pos = b.i64('position_ids', [1, seq], positions)
  const y = b.op('RotaryEmbedding', [x, pos, b.f32('cos_cache', [maxPos, hd / 2], cos), b.f32('sin_cache', [maxPos, hd / 2], sin)], {
    domain: MS_DOMAIN,
    outputs: ['Y'],
    attrs: { interleaved: { int: 0 }, num_heads: { int: heads } }
  })
  b.output(y, 'float32', [1, seq, heads * hd])
  return { name: 'RotaryEmbedding', bytes: b.toBytes(PRODUCER), output: 'Y', runs: [{ feeds: { X: { data: xs, dims: [1, seq, heads * hd] } }, expected }] }
}

/**
 * com.microsoft.GroupQueryAttention, prompt step without a past: 2 query heads share 1 KV head, head size 8
 * (the WebGPU kernel requires a multiple of 8), 3 positions, causal. seqlens_k / total_sequence_length must be int32, which the builder does not write,
 * so they are float32 constants behind a Cast (to = INT32); ORT folds the Cast at session creation.
 */
export function groupQueryAttentionCase(): ProbeCase {
  const heads = 2
  const kvHeads = 1
  const hd = 8
  const seq = 3
  const q = values(seq * heads * hd, 12)
  const kk = values(seq * kvHeads * hd, 13)
  const v = values(seq * kvHeads * hd, 14)
  const expected = new Float32Array(seq * heads * hd)
  const group = heads / kvHeads
  for (let s = 0; s < seq; s++) {
    for (let h = 0; h < heads; h++) {
      const kvh = Math.floor(h / group)
      const scores: number[] = []
      for (let t = 0; t <= s; t++) {
        let dot = 0
        for (let d = 0; d < hd; d++) dot += q[(s * heads + h) * hd + d] * kk[(t * kvHeads + kvh) * hd + d]
        scores.push(dot / Math.sqrt(hd))
      }
      const max = Math.max(...scores)
      const exps = scores.map((x) => Math.exp(x - max))
      const total = exps.reduce((a, e) => a + e, 0)
      for (let d = 0; d < hd; d++) {
        let acc = 0
        for (let t = 0; t <= s; t++) acc += (exps[t] / total) * v[(t * kvHeads + kvh) * hd + d]
        expected[(s * heads + h) * hd + d] = acc
      }
    }
  }
  const INT32 = 6 // onnx.TensorProto.DataType.INT32
  const b = new GraphBuilder('probe_group_query_attention')
  const qi = b.input('Q', 'float32', [1, seq, heads * hd])
  const ki = b.input('K', 'float32', [1, seq, kvHeads * hd])
  const vi = b.input('V', 'float32', [1, seq, kvHeads * hd])
  const seqlensK = b.op('Cast', [b.f32('seqlens_k_f', [1], Float32Array.of(seq - 1))], { attrs: { to: { int: INT32 } } })
  const total = b.op('Cast', [b.f32('total_len_f', [], Float32Array.of(seq))], { attrs: { to: { int: INT32 } } })
  b.node('GroupQueryAttention', [qi, ki, vi, '', '', seqlensK, total], {
    domain: MS_DOMAIN,
    outputs: ['Y', 'present_key', 'present_value'],
    attrs: { num_heads: { int: heads }, kv_num_heads: { int: kvHeads } }
  })
  b.output('Y', 'float32', [1, seq, heads * hd])
  return {
    name: 'GroupQueryAttention',
    bytes: b.toBytes(PRODUCER),
    output: 'Y',
    runs: [{ feeds: { Q: { data: q, dims: [1, seq, heads * hd] }, K: { data: kk, dims: [1, seq, kvHeads * hd] }, V: { data: v, dims: [1, seq, kvHeads * hd] } }, expected }]
  }
}

/** The contrib-op probe cases, in CONTRIB_OPS order. */
export function contribOpCases(): ProbeCase[] {
  return [matMulNBitsCase(), groupQueryAttentionCase(), rotaryEmbeddingCase(), simplifiedLayerNormCase(), skipSimplifiedLayerNormCase()]
}
