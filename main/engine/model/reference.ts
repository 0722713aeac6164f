/**
 * @file The oracle: a plain TypeScript forward pass for the llama family (Llama 1/2/3, Mistral, Qwen2),
 * one token at a time, obvious loops, no ONNX. Every compiled graph, placement and quantization is
 * checked against it. It is slow on purpose; correctness over speed.
 */
import { ropeInvFreq, ropePair } from './rope'
import { tensorToFloat32 } from './tensor'
import type { ModelConfig, ModelWeights, Tensor } from './types'

/**
 * How a compiled graph computes one quantized matmul with int8 activations (MatMulNBits accuracy_level
 * 4, MLAS CompInt8): the input is rounded to int8 per `block` values along K — scale = max|x|/127
 * (float32), q = round-half-even(x · (127/max|x|)), x' = q · scale — and multiplied by the weight.
 */
export interface Int8Rounding {
  readonly block: number
  /**
   * Q4_K-style weights only: per-block offsets [K/block, N] that the graph subtracts as
   * Σ_b minsT[b, n] · Σ_{k in b} x_k on the unrounded x (they are part of the dequantized weight, so
   * the reference corrects W·x' by Σ_b minsT[b, n] · Σ_{k in b} (x'_k − x_k)). Null otherwise.
   */
  readonly minsT: Float32Array | null
}

/** How the oracle computes, where a compiled graph's arithmetic is to be matched exactly. */
export interface ReferenceOptions {
  /** For a matmul with weight `t`: how its input is rounded to int8 first, or null to use x as is. */
  readonly int8Activations?: (t: Tensor) => Int8Rounding | null
  /**
   * For a matmul with weight `t`: another way to compute out[d] = W·x[n] (W8A8 on an integer NPU, w8a8.ts), or
   * null for the usual one. Asked once per weight and state.
   */
  readonly linearOverride?: (t: Tensor) => LinearOverride | null
  /** Sees each matmul's input x[n] before the product (calibration statistics); must not change it. */
  readonly observeInput?: (t: Tensor, x: Float32Array) => void
}

/** A replacement product for one weight: out[d] = W·x[n]. */
export type LinearOverride = (out: Float32Array, x: Float32Array) => void

/**
 * Activation buffers and the KV cache, sized once from the config (llama2.c's RunState), and the state's
 * own caches of what it derives from the weights.
 */
export interface ReferenceState {
  readonly maxSeqLen: number
  readonly options: ReferenceOptions
  /**
   * each weight as f32, decoded on first use: the oracle computes in f32 from the values the graph encodes.
   * A full copy per state, which is affordable because the oracle runs on test-sized models.
   */
  readonly dequantized: WeakMap<Tensor, Float32Array>
  /**
   * each weight's int8 rounding, asked of options.int8Activations once (building one may repack the weight).
   * Per state, not per tensor: another state over the same weights may have another callback, or none.
   */
  readonly roundings: WeakMap<Tensor, Int8Rounding | null>
  /** each weight's replacement product, asked of options.linearOverride once */
  readonly overrides: WeakMap<Tensor, LinearOverride | null>
  /** scratch for the int8-rounded input of a matmul: [max(dim, hiddenDim, qDim)] */
  readonly xq: Float32Array
  /** per layer: [maxSeqLen, nKvHeads*headDim] */
  readonly keyCache: Float32Array[]
  readonly valueCache: Float32Array[]
  readonly x: Float32Array
  readonly xb: Float32Array
  readonly xb2: Float32Array
  readonly q: Float32Array
  readonly k: Float32Array
  readonly v: Float32Array
  readonly att: Float32Array
  readonly hb: Float32Array
  readonly hb2: Float32Array
  readonly logits: Float32Array
  readonly invFreq: Float64Array
}

/** Allocates the run state for up to `maxSeqLen` positions. */
export function createReferenceState(config: ModelConfig, maxSeqLen: number, options: ReferenceOptions = {}): ReferenceState {
  const kvDim = config.nKvHeads * config.headDim
  const qDim = config.nHeads * config.headDim
  return {
    maxSeqLen,
    options,
    dequantized: new WeakMap(),
    roundings: new WeakMap(),
    overrides: new WeakMap(),
    xq: new Float32Array(Math.max(config.dim, config.hiddenDim, qDim)),
    keyCache: Array.from({ length: config.nLayers }, () => new Float32Array(maxSeqLen * kvDim)),
    valueCache: Array.from({ length: config.nLayers }, () => new Float32Array(maxSeqLen * kvDim)),
    x: new Float32Array(config.dim),
    xb: new Float32Array(Math.max(config.dim, qDim)),
    xb2: new Float32Array(config.dim),
    q: new Float32Array(qDim),
    k: new Float32Array(kvDim),
    v: new Float32Array(kvDim),
    att: new Float32Array(maxSeqLen),
    hb: new Float32Array(config.hiddenDim),
    hb2: new Float32Array(config.hiddenDim),
    logits: new Float32Array(config.vocabSize),
    invFreq: ropeInvFreq(config)
  }
}

/** The weight `t` as f32, dequantized once per state. */
function f32(state: ReferenceState, t: Tensor): Float32Array {
  let v = state.dequantized.get(t)
  if (!v) {
    v = tensorToFloat32(t)
    state.dequantized.set(t, v)
  }
  return v
}

/** o = x * w / sqrt(mean(x²) + eps); x, o, w: [n] */
function rmsnorm(o: Float32Array, x: Float32Array, w: Float32Array, eps: number): void {
  let ss = 0
  for (let i = 0; i < w.length; i++) ss += x[i] * x[i]
  const scale = 1 / Math.sqrt(ss / w.length + eps)
  for (let i = 0; i < w.length; i++) o[i] = w[i] * (scale * x[i])
}

/** W (d,n) @ x (n,) -> out (d,). Where the time goes. Accumulates in f64 to be a stable oracle. */
function matmul(out: Float32Array, x: Float32Array, w: Float32Array, n: number, d: number): void {
  for (let i = 0; i < d; i++) {
    let sum = 0
    const row = i * n
    for (let j = 0; j < n; j++) sum += w[row + j] * x[j]
    out[i] = sum
  }
}

/**
 * x[0..n) rounded to int8 per block of `block` values (see Int8Rounding) into `xq[0..n)`; returns xq.
 * Exported for tests of the graph's quantized matmuls.
 */
export function roundToInt8Blocks(xq: Float32Array, x: Float32Array, n: number, block: number): Float32Array {
  for (let start = 0; start < n; start += block) {
    const end = Math.min(n, start + block)
    let amax = 0
    for (let i = start; i < end; i++) amax = Math.max(amax, Math.abs(x[i]))
    const scale = Math.fround(amax / 127)
    const inverse = amax === 0 ? 0 : Math.fround(127 / amax)
    for (let i = start; i < end; i++) {
      const v = Math.fround(x[i] * inverse)
      // round half to even, as _mm512_roundscale_ps(v, _MM_ROUND_NEAREST)
      const f = Math.floor(v)
      const frac = v - f
      const q = frac > 0.5 || (frac === 0.5 && f % 2 !== 0) ? f + 1 : f
      xq[i] = q * scale
    }
  }
  return xq
}

/** W (d,n) @ x (n,) -> out (d,) for a model weight, rounding x to int8 blocks first where the options say so. */
function linear(state: ReferenceState, out: Float32Array, x: Float32Array, w: Tensor, n: number, d: number): void {
  const { observeInput, linearOverride } = state.options
  if (observeInput) observeInput(w, x.subarray(0, n))
  if (linearOverride) {
    let override = state.overrides.get(w)
    if (override === undefined) {
      override = linearOverride(w)
      state.overrides.set(w, override)
    }
    if (override) {
      override(out.subarray(0, d), x.subarray(0, n))
      return
    }
  }
  const ask = state.options.int8Activations
  let rounding: Int8Rounding | null = null
  if (ask) {
    const known = state.roundings.get(w)
    rounding = known === undefined ? ask(w) : known
    if (known === undefined) state.roundings.set(w, rounding)
  }
  if (!rounding) {
    matmul(out, x, f32(state, w), n, d)
    return
  }
  const xq = roundToInt8Blocks(state.xq, x, n, rounding.block)
  matmul(out, xq, f32(state, w), n, d)
  const mins = rounding.minsT
  if (!mins) return
  for (let b = 0; b < n / rounding.block; b++) {
    let shift = 0
    for (let k = b * rounding.block; k < (b + 1) * rounding.block; k++) shift += xq[k] - x[k]
    for (let i = 0; i < d; i++) out[i] += mins[b * d + i] * shift
  }
}

function addBias(state: ReferenceState, out: Float32Array, b: Tensor | null): void {
  if (!b) return
  const bias = f32(state, b)
  for (let i = 0; i < bias.length; i++) out[i] += bias[i]
}

/** In-place softmax over x[0..n). */
function softmax(x: Float32Array, n: number): void {
  let max = -Infinity
  for (let i = 0; i < n; i++) if (x[i] > max) max = x[i]
  let sum = 0
  for (let i = 0; i < n; i++) {
    x[i] = Math.exp(x[i] - max)
    sum += x[i]
  }
  for (let i = 0; i < n; i++) x[i] /= sum
}

/** Rotates every head of `vec` ([nHeads*headDim]) in place for position `pos`. */
function rope(config: ModelConfig, invFreq: Float64Array, vec: Float32Array, nHeads: number, pos: number): void {
  for (let h = 0; h < nHeads; h++) {
    const base = h * config.headDim
    for (let j = 0; j < invFreq.length; j++) {
      const angle = pos * invFreq[j]
      const cos = Math.cos(angle)
      const sin = Math.sin(angle)
      const [a, b] = ropePair(config, j)
      const v0 = vec[base + a]
      const v1 = vec[base + b]
      vec[base + a] = v0 * cos - v1 * sin
      vec[base + b] = v0 * sin + v1 * cos
    }
  }
}

/**
 * Runs one token at position `pos` (all earlier positions must already be in `state`) and returns the
 * logits [vocab] (a view into state.logits, overwritten by the next call).
 */
export function referenceForward(
  model: { readonly config: ModelConfig; readonly weights: ModelWeights },
  state: ReferenceState,
  token: number,
  pos: number
): Float32Array {
  const { config: c, weights: w } = model
  if (pos < 0 || pos >= state.maxSeqLen) throw new RangeError(`position ${pos} outside the cache (${state.maxSeqLen})`)
  if (token < 0 || token >= c.vocabSize) throw new RangeError(`token ${token} outside the vocabulary (${c.vocabSize})`)
  const { x, xb, xb2, q, k, v, att, hb, hb2 } = state
  const hd = c.headDim
  const qDim = c.nHeads * hd
  const kvDim = c.nKvHeads * hd
  const group = c.nHeads / c.nKvHeads

  // embed: x = tokenEmbedding[token]  [dim]
  x.set(f32(state, w.tokenEmbedding).subarray(token * c.dim, (token + 1) * c.dim))

  for (let l = 0; l < c.nLayers; l++) {
    const L = w.layers[l]
    // attention norm: xb = rmsnorm(x)  [dim]
    rmsnorm(xb, x, f32(state, L.attnNorm), c.normEps)
    // qkv: q [qDim], k [kvDim], v [kvDim] (+ biases for Qwen2)
    linear(state, q, xb, L.wq, c.dim, qDim)
    linear(state, k, xb, L.wk, c.dim, kvDim)
    linear(state, v, xb, L.wv, c.dim, kvDim)
    addBias(state, q, L.bq)
    addBias(state, k, L.bk)
    addBias(state, v, L.bv)
    // rope on q (all heads) and k (kv heads)
    rope(c, state.invFreq, q, c.nHeads, pos)
    rope(c, state.invFreq, k, c.nKvHeads, pos)
    // cache write: row `pos` of this layer's K/V  [maxSeqLen, kvDim]
    state.keyCache[l].set(k, pos * kvDim)
    state.valueCache[l].set(v, pos * kvDim)
    // attention per query head over positions 0..pos; head h reads kv head floor(h / group)
    const kc = state.keyCache[l]
    const vc = state.valueCache[l]
    const scale = 1 / Math.sqrt(hd)
    for (let h = 0; h < c.nHeads; h++) {
      const qo = h * hd
      const kvo = Math.floor(h / group) * hd
      for (let t = 0; t <= pos; t++) {
        let s = 0
        for (let i = 0; i < hd; i++) s += q[qo + i] * kc[t * kvDim + kvo + i]
        att[t] = s * scale
      }
      softmax(att, pos + 1)
      for (let i = 0; i < hd; i++) {
        let s = 0
        for (let t = 0; t <= pos; t++) s += att[t] * vc[t * kvDim + kvo + i]
        xb[qo + i] = s
      }
    }
    // output projection + residual: x += wo · xb
    linear(state, xb2, xb, L.wo, qDim, c.dim)
    for (let i = 0; i < c.dim; i++) x[i] += xb2[i]
    // ffn norm, then SwiGLU: x += down( silu(gate·xb) * (up·xb) )
    rmsnorm(xb, x, f32(state, L.ffnNorm), c.normEps)
    linear(state, hb, xb, L.wGate, c.dim, c.hiddenDim)
    linear(state, hb2, xb, L.wUp, c.dim, c.hiddenDim)
    for (let i = 0; i < c.hiddenDim; i++) {
      const g = hb[i]
      hb[i] = (g / (1 + Math.exp(-g))) * hb2[i]
    }
    linear(state, xb2, hb, L.wDown, c.hiddenDim, c.dim)
    for (let i = 0; i < c.dim; i++) x[i] += xb2[i]
  }

  // final norm and classifier: logits = output · rmsnorm(x)  [vocab]
  rmsnorm(x, x, f32(state, w.finalNorm), c.normEps)
  linear(state, state.logits, x, w.output, c.dim, c.vocabSize)
  return state.logits
}
