/**
 * @file What every op-group emitter shares while one graph is built: the builder, the model, the value
 * map (logical value name -> graph value name), and values derived once per graph (constants, RoPE
 * cos/sin rows for the run's positions, the causal mask, per-block input sums for Q4_K).
 */
import { ropeInvFreq, type ModelConfig, type ModelWeights } from '../model'
import type { GraphBuilder } from './onnx-builder'

/** Compile-time choices that change the graph (and so are part of its cache key). */
export interface GraphOptions {
  /** positions the RoPE tables cover; the runtime never runs past this (≤ config.contextLength) */
  readonly ropeTableLength: number
}

/** State shared by the emitters of one graph. */
export class EmitContext {
  /** logical value name (see op-groups.ts) -> graph value name */
  readonly values = new Map<string, string>()
  private readonly memo = new Map<string, string>()
  private ropeTableNames: { cosTable: string; sinTable: string } | null = null

  constructor(
    readonly b: GraphBuilder,
    readonly config: ModelConfig,
    readonly weights: ModelWeights,
    readonly options: GraphOptions
  ) {}

  /** The graph value for a logical value; throws when no earlier group produced it. */
  get(name: string): string {
    const v = this.values.get(name)
    if (v === undefined) throw new Error(`graph value ${name} is not available (missing segment input?)`)
    return v
  }

  /** Records the graph value a group produced for a logical value. */
  set(name: string, graphValue: string): void {
    if (this.values.has(name)) throw new Error(`graph value ${name} produced twice`)
    this.values.set(name, graphValue)
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

  /** Shared float32 scalar constant. */
  f32Scalar(value: number): string {
    return this.once(`f32:${value}`, () => this.b.f32(`const_f32`, [], Float32Array.of(value)))
  }

  /**
   * cos and sin of pos·θ_j for this run's positions: [S, ropeDim/2] each. Tables over
   * `ropeTableLength` positions are computed in float64 from `ropeInvFreq` (as the reference does) and
   * stored as float32; the graph gathers the rows named by the `positions` input.
   */
  ropeCosSin(): { cos: string; sin: string } {
    const cos = this.once('rope:cos', () => {
      const { cosTable } = this.ropeTables()
      return this.b.op('Gather', [cosTable, this.get('positions')], { name: 'rope/cos', attrs: { axis: { int: 0 } } })
    })
    const sin = this.once('rope:sin', () => {
      const { sinTable } = this.ropeTables()
      return this.b.op('Gather', [sinTable, this.get('positions')], { name: 'rope/sin', attrs: { axis: { int: 0 } } })
    })
    return { cos, sin }
  }

  private ropeTables(): { cosTable: string; sinTable: string } {
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
      this.ropeTableNames = { cosTable: this.b.f32('rope_cos_table', [n, half], c), sinTable: this.b.f32('rope_sin_table', [n, half], s) }
    }
    return this.ropeTableNames
  }

  /**
   * Additive causal mask [groupSize·S, T] (0 where key t ≤ the query's absolute position, −∞ elsewhere),
   * rows repeated per query head of a KV group to match the attention layout in emit-attention.ts.
   * `keys` is any layer's concatenated keys [T, nKvHeads, headDim]; T is the same in every layer.
   */
  causalMask(keys: string, groupSize: number): string {
    return this.once(`mask:${groupSize}`, () => {
      const b = this.b
      const total = b.op('Shape', [keys], { name: 'mask/total_len', attrs: { start: { int: 0 }, end: { int: 1 } } })
      const totalScalar = b.op('Squeeze', [total, this.i64([0])], { name: 'mask/total_len_scalar' })
      const keyPos = b.op('Range', [this.i64([0], true), totalScalar, this.i64([1], true)], { name: 'mask/key_pos' })
      const keyRow = b.op('Unsqueeze', [keyPos, this.i64([0])], { name: 'mask/key_row' }) // [1, T]
      const queryCol = b.op('Unsqueeze', [this.get('positions'), this.i64([1])], { name: 'mask/query_col' }) // [S, 1]
      const visible = b.op('LessOrEqual', [keyRow, queryCol], { name: 'mask/visible' }) // [S, T] bool
      const additive = b.op('Where', [visible, this.f32Scalar(0), this.f32Scalar(-Infinity)], { name: 'mask/additive' })
      return groupSize === 1 ? additive : b.op('Tile', [additive, this.i64([groupSize, 1])], { name: 'mask/per_group' })
    })
  }

  /** Sums of `input` [S, K] over consecutive blocks of `blockSize`: [S, K/blockSize] (Q4_K mins term). */
  blockSums(input: string, k: number, blockSize: number): string {
    return this.once(`blocksum:${input}:${blockSize}`, () => {
      const blocks = this.b.op('Reshape', [input, this.i64([0, k / blockSize, blockSize])], { name: `${input}/blocks` })
      return this.b.op('ReduceSum', [blocks, this.i64([2])], { name: `${input}/block_sums`, attrs: { keepdims: { int: 0 } } })
    })
  }
}
