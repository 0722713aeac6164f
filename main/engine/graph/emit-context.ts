/**
 * @file What every op-group emitter shares while one graph is built: the builder, the model, the value
 * map (logical value name -> graph value name), residual sums not yet materialized (so a norm can fuse
 * them), and values derived once per graph (constants, RoPE tables and position ids, attention masks,
 * per-block input sums for Q4_K).
 */
import { ropeInvFreq, tensorToFloat32, type ModelConfig, type ModelWeights, type Tensor } from '../model'
import { MS_DOMAIN, type GraphBuilder } from './onnx-builder'

/**
 * The execution provider a graph is shaped for. 'cpu': the speed-tuned graph (int64 shape arithmetic
 * for the masks, a Split with computed sizes). 'webgpu': the same arithmetic with no int64 data op and
 * no op that only combines shapes — the WebGPU EP registers most ops for float/int32 only and leaves
 * shape subgraphs (consumers of Shape) to the CPU EP, which a session without CPU fallback refuses.
 */
export type GraphTarget = 'cpu' | 'webgpu'

/** The graph flavour a device's execution provider runs (the WebGPU EP refuses the CPU graph's int64 shape arithmetic). */
export function graphTargetOf(ep: string): GraphTarget {
  return ep === 'webgpu' ? 'webgpu' : 'cpu'
}

/** Compile-time choices that change the graph (and so are part of its cache key). */
export interface GraphOptions {
  /** positions the RoPE tables cover; the runtime never runs past this (≤ config.contextLength) */
  readonly ropeTableLength: number
  /**
   * Quantized matmuls quantize their activations to int8 per weight block (MatMulNBits accuracy_level
   * 4, what llama.cpp does for its quantized dot products) instead of computing in float32. Default
   * true: several times faster on CPU; `reference.ts` can emulate it exactly (see `int8ActivationBlock`).
   */
  readonly int8Activations?: boolean
  /** which EP the graph is for (default 'cpu'); see GraphTarget */
  readonly target?: GraphTarget
  /**
   * Tokens per run fixed in the graph, for devices that take only static shapes (NPUs): every activation is
   * [1, staticRows, width] and the runtime pads a shorter chunk. null (the default): a dynamic "seq" dimension.
   */
  readonly staticRows?: number | null
  /**
   * W8A8 for an integer NPU: the calibrated per-tensor activation scale of each layer matmul, by weight name;
   * those matmuls become QuantizeLinear → MatMulInteger (per-channel int8 weights) → DequantizeLinear, the arithmetic of
   * model/w8a8.ts. null (the default): float or MatMulNBits matmuls.
   */
  readonly w8a8?: Readonly<Record<string, number>> | null
}

/** GraphOptions with every default filled in (what the compiler and the cache key use). */
export type ResolvedGraphOptions = Required<GraphOptions>

/** Fills in defaults, so equal graphs get equal cache keys whatever the caller left out. */
export function resolveGraphOptions(options: GraphOptions): ResolvedGraphOptions {
  const staticRows = options.staticRows ?? null
  if (staticRows !== null && (!Number.isInteger(staticRows) || staticRows < 1)) throw new RangeError(`staticRows must be a positive integer or null, got ${staticRows}`)
  const w8a8 = options.w8a8 ?? null
  if (w8a8 !== null) {
    for (const [name, scale] of Object.entries(w8a8)) if (!(scale > 0) || !Number.isFinite(scale)) throw new RangeError(`w8a8 scale of ${name} must be a positive number, got ${scale}`)
  }
  return { ropeTableLength: options.ropeTableLength, int8Activations: options.int8Activations ?? true, target: options.target ?? 'cpu', staticRows, w8a8 }
}

/** A residual sum a + b that no op has computed yet. */
interface PendingSum {
  readonly a: string
  readonly b: string
}

/** State shared by the emitters of one graph. */
export class EmitContext {
  /** logical value name (see op-groups.ts) -> graph value name */
  readonly values = new Map<string, string>()
  readonly options: ResolvedGraphOptions
  private readonly pending = new Map<string, PendingSum>()
  private readonly memo = new Map<string, string>()
  private ropeTableNames: { cos: string; sin: string } | null = null

  constructor(
    readonly b: GraphBuilder,
    readonly config: ModelConfig,
    readonly weights: ModelWeights,
    options: GraphOptions
  ) {
    this.options = resolveGraphOptions(options)
  }

  /** The graph value for a logical value (materializing a pending sum); throws when nothing produced it. */
  get(name: string): string {
    const v = this.values.get(name)
    if (v !== undefined) return v
    const sum = this.pending.get(name)
    if (sum) {
      const out = this.b.op('Add', [sum.a, sum.b], { name: `${name}/sum` })
      this.pending.delete(name)
      this.values.set(name, out)
      return out
    }
    throw new Error(`graph value ${name} is not available (missing segment input?)`)
  }

  /** True when a logical value is available (a segment input or produced so far). */
  has(name: string): boolean {
    return this.values.has(name) || this.pending.has(name)
  }

  /** Records the graph value a group produced for a logical value. */
  set(name: string, graphValue: string): void {
    if (this.values.has(name) || this.pending.has(name)) throw new Error(`graph value ${name} produced twice`)
    this.values.set(name, graphValue)
  }

  /** Records a logical value as the sum a + b, left for the next norm to fuse (or `get` to add). */
  setSum(name: string, a: string, b: string): void {
    if (this.values.has(name) || this.pending.has(name)) throw new Error(`graph value ${name} produced twice`)
    this.pending.set(name, { a, b })
  }

  /**
   * RMSNorm of a logical value over its last axis: x / sqrt(mean(x²) + eps) · weight. A pending residual
   * sum is fused (SkipSimplifiedLayerNormalization computes the sum and the norm in one op, and the sum
   * becomes the value's graph value).
   */
  normOf(name: string, weight: Tensor, label: string): string {
    const w = this.b.f32(`${label}.weight`, [this.config.dim], tensorToFloat32(weight))
    const eps = { epsilon: { float: this.config.normEps } }
    const sum = this.pending.get(name)
    if (!sum) {
      return this.b.op('SimplifiedLayerNormalization', [this.get(name), w], { name: label, attrs: { axis: { int: -1 }, stash_type: { int: 1 }, ...eps } })
    }
    const total = this.b.reserveName(`${name}/sum`)
    const [normed] = this.b.node('SkipSimplifiedLayerNormalization', [sum.a, sum.b, w], {
      name: label,
      domain: MS_DOMAIN,
      outputs: [this.b.reserveName(label), '', '', total],
      attrs: eps
    })
    this.pending.delete(name)
    this.values.set(name, total)
    return normed
  }

  /** Builds a value once per graph under `key`. */
  once(key: string, build: () => string): string {
    let v = this.memo.get(key)
    if (v === undefined) {
      v = build()
      this.memo.set(key, v)
    }
    return v
  }

  /** Shared int64 constant (1-D, or a scalar when `scalar`). */
  i64(values: readonly number[], scalar = false): string {
    const key = `i64:${scalar ? 's' : 'v'}:${values.join(',')}`
    return this.once(key, () => this.b.i64(`const_i64_${values.join('_').replace(/-/g, 'm')}`, scalar ? [] : [values.length], values))
  }

  /** Shared float32 1-D constant. */
  f32Vector(values: readonly number[]): string {
    return this.once(`f32v:${values.join(',')}`, () => this.b.f32('const_f32_vector', [values.length], Float32Array.from(values)))
  }

  /** Shared float32 scalar constant. */
  f32Scalar(value: number): string {
    return this.once(`f32:${value}`, () => this.b.f32(`const_f32`, [], Float32Array.of(value)))
  }

  /**
   * cos and sin of pos·θ_j: [ropeTableLength, ropeDim/2] each, computed in float64 from `ropeInvFreq` (as
   * the reference does) and stored as float32 — the caches RotaryEmbedding reads rows from.
   */
  ropeTables(): { cos: string; sin: string } {
    if (!this.ropeTableNames) {
      const inv = ropeInvFreq(this.config)
      const half = inv.length
      const n = this.options.ropeTableLength
      const c = new Float32Array(n * half)
      const s = new Float32Array(n * half)
      for (let p = 0; p < n; p++) {
        for (let j = 0; j < half; j++) {
          const angle = p * inv[j]
          c[p * half + j] = Math.cos(angle)
          s[p * half + j] = Math.sin(angle)
        }
      }
      this.ropeTableNames = { cos: this.b.f32('rope_cos_table', [n, half], c), sin: this.b.f32('rope_sin_table', [n, half], s) }
    }
    return this.ropeTableNames
  }

  /**
   * RotaryEmbedding's position_ids and cos/sin caches. CPU: position_ids [1] = the run's first position P
   * into the whole tables (row s rotates by table row P + s: a run's positions are always P..P+S−1), the
   * same value the past mask compares against. WebGPU (which reshapes and casts no int64 data, but gathers
   * by int64 indices): the tables' rows for this run [S, ropeDim/2] and position_ids [1] = 0.
   */
  ropeInputs(): { positionIds: string; cos: string; sin: string } {
    const tables = this.ropeTables()
    if (this.options.target === 'cpu') return { positionIds: this.firstPosition(), ...tables }
    const rows = (which: 'cos' | 'sin'): string =>
      this.once(`rope:rows:${which}`, () => this.b.op('Gather', [tables[which], this.get('positions')], { name: `rope/${which}_rows`, attrs: { axis: { int: 0 } } }))
    return { positionIds: this.i64([0]), cos: rows('cos'), sin: rows('sin') }
  }

  /** The run's first position P (= the positions cached before it), as [1] int64. */
  private firstPosition(): string {
    return this.once('positions:first', () => this.b.op('Slice', [this.get('positions'), this.i64([0]), this.i64([1])], { name: 'positions/first' }))
  }

  /** The run's positions as float32 [S], gathered from a table 0..ropeTableLength−1 (WebGPU target: its masks run on floats). */
  private positionsFloat(): string {
    return this.once('positions:f32', () => {
      const n = this.options.ropeTableLength
      const table = this.b.f32('position_values', [n], Float32Array.from({ length: n }, (_, i) => i))
      return this.b.op('Gather', [table, this.get('positions')], { name: 'positions/f32', attrs: { axis: { int: 0 } } })
    })
  }

  /** Capacity C of the cache buffers, as [1] int64, from a layer's past keys [nKv, hd, C]. */
  private capacity(pastKeys: string): string {
    return this.once('attn:capacity', () => this.b.op('Shape', [pastKeys], { name: 'attn/capacity', attrs: { start: { int: 2 }, end: { int: 3 } } }))
  }

  /** Tokens S in this run, as [1] int64. */
  private runLength(): string {
    return this.once('attn:run_length', () => this.b.op('Shape', [this.get('positions')], { name: 'attn/run_length' }))
  }

  /**
   * Additive mask [C] over the cache positions: 0 for the P cached ones (t < positions[0]), −∞ for the
   * free capacity beyond them. Every query of the run sees all cached positions (they all come before it).
   */
  private pastMask(pastKeys: string): string {
    return this.once('mask:past', () => {
      const b = this.b
      const cap = b.op('Squeeze', [this.capacity(pastKeys), this.i64([0])], { name: 'mask/capacity_scalar' })
      const keyPos = b.op('Range', [this.i64([0], true), cap, this.i64([1], true)], { name: 'mask/cache_pos' })
      const valid = b.op('Less', [keyPos, this.firstPosition()], { name: 'mask/cache_valid' })
      return b.op('Where', [valid, this.f32Scalar(0), this.f32Scalar(-Infinity)], { name: 'mask/past' })
    })
  }

  /**
   * Additive causal mask among the run's own tokens: [g·S, S] with row r = i·S + s (query head i of a KV
   * group, token s) seeing the run's tokens 0..s — key position ≤ query position, compared straight from
   * the positions ([S] against [S, 1] broadcasts to [S, S]).
   */
  private newMask(groupSize: number): string {
    return this.once(`mask:new:${groupSize}`, () => {
      const b = this.b
      const positions = this.get('positions')
      const queryCol = b.op('Unsqueeze', [positions, this.i64([1])], { name: 'mask/query_col' }) // [S, 1]
      const visible = b.op('LessOrEqual', [positions, queryCol], { name: 'mask/visible' })
      const additive = b.op('Where', [visible, this.f32Scalar(0), this.f32Scalar(-Infinity)], { name: 'mask/new' })
      return groupSize === 1 ? additive : b.op('Tile', [additive, this.i64([groupSize, 1])], { name: 'mask/new_per_group' })
    })
  }

  /**
   * The whole additive mask of one attention's scores [g·S, C + S]: the cache part (free capacity masked)
   * beside the causal part, built once per graph so each layer adds it with one op.
   */
  attentionMask(pastKeys: string, groupSize: number): string {
    if (this.options.target === 'webgpu') return this.attentionMaskFloat(pastKeys, groupSize)
    return this.once(`mask:attn:${groupSize}`, () => this.joinMasks(this.pastMask(pastKeys), this.newMask(groupSize), groupSize))
  }

  /**
   * [g·S, C + S] from the cache part [C] and the causal part [g·S, S]: the cache part gets its rows by
   * broadcasting against the causal part's first column, which is 0 on every row (key 0 ≤ any query) — no
   * shape arithmetic, which the WebGPU EP would leave to the CPU.
   */
  private joinMasks(past: string, own: string, groupSize: number): string {
    const b = this.b
    const zeroCol = b.op('Slice', [own, this.i64([0]), this.i64([1]), this.i64([1])], { name: `mask/zero_col_${groupSize}` })
    const pastRows = b.op('Add', [past, zeroCol], { name: `mask/past_rows_${groupSize}` })
    return b.op('Concat', [pastRows, own], { name: `mask/attn_${groupSize}`, attrs: { axis: { int: -1 } } })
  }

  /** Cuts attention probabilities [.., C + S] into the cache part [.., C] and the run's own part [.., S]. */
  splitProbs(probs: string, pastKeys: string, label: string): [string, string] {
    const b = this.b
    if (this.options.target === 'webgpu') {
      // Slice bounds are read on the host, so C may come straight from Shape; a Concat of shapes may not
      const cap = this.capacity(pastKeys)
      const past = b.op('Slice', [probs, this.i64([0]), cap, this.i64([-1])], { name: `${label}_past` })
      const own = b.op('Slice', [probs, cap, this.i64([Number.MAX_SAFE_INTEGER]), this.i64([-1])], { name: `${label}_own` })
      return [past, own]
    }
    const sizes = this.once('attn:split', () => b.op('Concat', [this.capacity(pastKeys), this.runLength()], { name: 'attn/split_sizes', attrs: { axis: { int: 0 } } }))
    const [past, own] = b.node('Split', [probs, sizes], { name: label, outputCount: 2, attrs: { axis: { int: -1 } } })
    return [past, own]
  }

  /**
   * attentionMask for the WebGPU target, from float positions: causal part visible where key position ≤
   * query position; cache part visible at slots t < P, with t + 1 from a cumulative sum over ones [C]
   * (Expand reads C on the host, so no shape arithmetic is left for the CPU EP).
   */
  private attentionMaskFloat(pastKeys: string, groupSize: number): string {
    return this.once(`mask:attn:${groupSize}`, () => {
      const b = this.b
      const pos = this.positionsFloat()
      const keyRow = b.op('Reshape', [pos, this.i64([1, -1])], { name: 'mask/key_row' }) // [1, S]
      const queryCol = b.op('Reshape', [pos, this.i64([-1, 1])], { name: 'mask/query_col' }) // [S, 1]
      const visible = b.op('LessOrEqual', [keyRow, queryCol], { name: 'mask/visible' })
      const causal = b.op('Where', [visible, this.f32Scalar(0), this.f32Scalar(-Infinity)], { name: 'mask/new' })
      const own = groupSize === 1 ? causal : b.op('Tile', [causal, this.i64([groupSize, 1])], { name: 'mask/new_per_group' }) // [g·S, S]
      const ones = b.op('Expand', [this.f32Vector([1]), this.capacity(pastKeys)], { name: 'mask/cache_ones' })
      const slot = b.op('CumSum', [ones, this.i64([0], true)], { name: 'mask/cache_slot_plus_1' }) // [C]: t + 1
      const cached = b.op('Slice', [pos, this.i64([0]), this.i64([1])], { name: 'mask/cached_len' }) // [1]: P
      const valid = b.op('LessOrEqual', [slot, cached], { name: 'mask/cache_valid' })
      const past = b.op('Where', [valid, this.f32Scalar(0), this.f32Scalar(-Infinity)], { name: 'mask/past' }) // [C]
      return this.joinMasks(past, own, groupSize)
    })
  }

  /** Sums of `input` [.., S, K] over consecutive blocks of `blockSize`: [S, K/blockSize] (Q4_K mins term). */
  blockSums(input: string, k: number, blockSize: number): string {
    return this.once(`blocksum:${input}:${blockSize}`, () => {
      const blocks = this.b.op('Reshape', [input, this.i64([-1, k / blockSize, blockSize])], { name: `${input}/blocks` })
      return this.b.op('ReduceSum', [blocks, this.i64([2])], { name: `${input}/block_sums`, attrs: { keepdims: { int: 0 } } })
    })
  }
}
