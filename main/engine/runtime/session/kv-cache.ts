/**
 * @file The KV cache, owned by the runtime (not by ONNX Runtime). Per layer one keys buffer, transposed
 * [nKvHeads, headDim, capacity], and one values buffer [nKvHeads, capacity, headDim], float32: the
 * layouts the graph's attention multiplies by directly, so each run gets the whole buffers as inputs
 * without a copy (inputs are free in onnxruntime-node, outputs are not). Runs return only the new rows,
 * which are written here. Attention reads the whole capacity (the graph masks positions ≥ length), so
 * capacity grows with the conversation — geometrically, copying the cache only when it grows, never per
 * token — instead of being allocated at the context length up front.
 */

import { decodeKvBlock, encodeKvBlock, type KvFormat, type KvRuns } from '../kv-snapshot'

/** Cache geometry. */
export interface KvCacheShape {
  readonly nLayers: number
  readonly nKvHeads: number
  readonly headDim: number
  /** most positions the cache may hold (the context length) */
  readonly maxLen: number
}

/** Largest cache we allocate per buffer (values); a Float32Array cannot exceed 2^32 − 1 elements anyway. */
export const MAX_KV_BUFFER_VALUES = 2 ** 31
/**
 * Positions allocated before the first growth. Small, because attention reads the whole capacity:
 * at 128 a 20-token chat would stream 6× the cache it needs every token.
 */
export const MIN_KV_CAPACITY = 32
/** Capacity is a multiple of this many positions (keeps growth steps coarse). */
export const KV_CAPACITY_STEP = 32
/**
 * Growth: at least capacity / KV_GROWTH_DIVISOR more positions per step. 8 bounds the attention work
 * spent on unused capacity at 12.5% and makes the copy on growth cost under one cache-read per 1/8 of
 * the positions appended — a constant fraction per token, whatever the length.
 */
export const KV_GROWTH_DIVISOR = 8

/** Per-layer K/V buffers plus the number of valid positions. */
export class KvCache {
  /** floats per position: nKvHeads · headDim */
  readonly rowValues: number
  private keyBuffers: Float32Array[]
  private valueBuffers: Float32Array[]
  private cap: number
  private validLength = 0

  constructor(readonly shape: KvCacheShape) {
    const { nLayers, nKvHeads, headDim, maxLen } = shape
    for (const [k, v] of Object.entries(shape)) {
      if (!Number.isInteger(v) || v < 1) throw new RangeError(`KV cache ${k} must be a positive integer, got ${v}`)
    }
    this.rowValues = nKvHeads * headDim
    if (maxLen * this.rowValues > MAX_KV_BUFFER_VALUES) {
      throw new RangeError(`KV cache of ${maxLen} positions × ${this.rowValues} values exceeds ${MAX_KV_BUFFER_VALUES} values per buffer`)
    }
    this.cap = Math.min(maxLen, MIN_KV_CAPACITY)
    this.keyBuffers = Array.from({ length: nLayers }, () => new Float32Array(this.cap * this.rowValues))
    this.valueBuffers = Array.from({ length: nLayers }, () => new Float32Array(this.cap * this.rowValues))
  }

  /** Number of cached positions (the next position to run). */
  get length(): number {
    return this.validLength
  }

  /** Positions the buffers hold now (≥ length; the graph's C). */
  get capacity(): number {
    return this.cap
  }

  /** Bytes held by all buffers. */
  get sizeBytes(): number {
    return 2 * this.shape.nLayers * this.cap * this.rowValues * 4
  }

  /** Layer `l`'s whole buffers: keys [nKvHeads, headDim, capacity], values [nKvHeads, capacity, headDim]. */
  past(l: number): { keys: Float32Array; values: Float32Array } {
    return { keys: this.keyBuffers[l], values: this.valueBuffers[l] }
  }

  /**
   * Makes room for `total` positions: grows the buffers (by at least 1/KV_GROWTH_DIVISOR, in
   * KV_CAPACITY_STEP units, at most maxLen), copying the valid prefix. Throws past maxLen.
   */
  reserve(total: number): void {
    const { maxLen, nKvHeads, headDim } = this.shape
    if (!Number.isInteger(total) || total < 0 || total > maxLen) throw new RangeError(`KV cache full: cannot hold ${total} positions (max ${maxLen})`)
    if (total <= this.cap) return
    const wanted = Math.max(total, this.cap + Math.ceil(this.cap / KV_GROWTH_DIVISOR))
    const next = Math.min(maxLen, Math.ceil(wanted / KV_CAPACITY_STEP) * KV_CAPACITY_STEP)
    const n = this.validLength
    for (let l = 0; l < this.shape.nLayers; l++) {
      const oldKeys = this.keyBuffers[l]
      const oldValues = this.valueBuffers[l]
      const keys = new Float32Array(next * this.rowValues)
      const values = new Float32Array(next * this.rowValues)
      // keys: one run of n positions per (head, dim) row; values: one run of n·headDim per head
      for (let r = 0; r < nKvHeads * headDim; r++) keys.set(oldKeys.subarray(r * this.cap, r * this.cap + n), r * next)
      for (let h = 0; h < nKvHeads; h++) values.set(oldValues.subarray(h * this.cap * headDim, (h * this.cap + n) * headDim), h * next * headDim)
      this.keyBuffers[l] = keys
      this.valueBuffers[l] = values
    }
    this.cap = next
  }

  /**
   * Writes `count` new rows for layer `l` at the current end: keys and values position-major
   * [count, nKvHeads·headDim] as the graph returns them. Call for every layer, then `commit(count)`.
   */
  write(l: number, newKeys: Float32Array, newValues: Float32Array, count: number): void {
    const { nKvHeads, headDim } = this.shape
    const n = count * this.rowValues
    if (this.validLength + count > this.cap) throw new RangeError(`KV cache full: ${this.validLength} + ${count} > capacity ${this.cap} (reserve first)`)
    if (newKeys.length !== n || newValues.length !== n) throw new RangeError(`layer ${l}: expected ${n} new K/V values, got ${newKeys.length}/${newValues.length}`)
    const keys = this.keyBuffers[l]
    const values = this.valueBuffers[l]
    const pos = this.validLength
    for (let s = 0; s < count; s++) {
      const src = s * this.rowValues
      for (let h = 0; h < nKvHeads; h++) {
        const from = src + h * headDim
        // values: a contiguous headDim run; keys: one value per (head, dim) row of the transposed buffer
        values.set(newValues.subarray(from, from + headDim), (h * this.cap + pos + s) * headDim)
        const keyRow = h * headDim * this.cap + pos + s
        for (let d = 0; d < headDim; d++) keys[keyRow + d * this.cap] = newKeys[from + d]
      }
    }
  }

  /** Makes `count` rows written by `write` part of the valid prefix. */
  commit(count: number): void {
    if (!Number.isInteger(count) || count < 0 || this.validLength + count > this.cap) {
      throw new RangeError(`cannot commit ${count} rows at ${this.validLength} (capacity ${this.cap})`)
    }
    this.validLength += count
  }

  /** Rewinds to `pos` cached positions (e.g. to regenerate); positions ≥ pos become free (their stale rows are masked). */
  truncate(pos: number): void {
    if (!Number.isInteger(pos) || pos < 0 || pos > this.validLength) {
      throw new RangeError(`cannot truncate the KV cache to ${pos}: it holds ${this.validLength} positions`)
    }
    this.validLength = pos
  }

  /** Positions [start, start + count) of every layer as snapshot bytes (kv-snapshot.ts layout). */
  readSnapshot(start: number, count: number, format: KvFormat): Uint8Array {
    if (!Number.isInteger(start) || !Number.isInteger(count) || start < 0 || count < 1 || start + count > this.validLength) {
      throw new RangeError(`positions ${start}..${start + count} are not all cached (length ${this.validLength})`)
    }
    return encodeKvBlock(this.shape, format, count, this.runs(start, count))
  }

  /**
   * Appends `count` positions from snapshot bytes (kv-snapshot.ts layout) at the current end; the caller reserves
   * room first. Throws on a length that does not fit the layout.
   */
  writeSnapshot(bytes: Uint8Array, count: number, format: KvFormat): void {
    const pos = this.validLength
    if (pos + count > this.cap) throw new RangeError(`KV cache full: ${pos} + ${count} > capacity ${this.cap} (reserve first)`)
    decodeKvBlock(this.shape, format, count, bytes, this.runs(pos, count))
    this.validLength += count
  }

  /** Positions [start, start + count) as the snapshot layout's runs: per layer, key channel rows, then value rows per head and position. */
  private runs(start: number, count: number): KvRuns {
    const { nLayers, nKvHeads, headDim } = this.shape
    return (visit) => {
      for (let l = 0; l < nLayers; l++) {
        const keys = this.keyBuffers[l]
        for (let r = 0; r < this.rowValues; r++) visit(keys, r * this.cap + start, count)
        const values = this.valueBuffers[l]
        for (let h = 0; h < nKvHeads; h++) for (let s = 0; s < count; s++) visit(values, (h * this.cap + start + s) * headDim, headDim)
      }
    }
  }

  /** Copies row `pos` of layer `l` out position-major (keys and values [nKvHeads·headDim]); for tests and snapshots. */
  row(l: number, pos: number): { keys: Float32Array; values: Float32Array } {
    if (!Number.isInteger(pos) || pos < 0 || pos >= this.validLength) throw new RangeError(`position ${pos} is not cached (length ${this.validLength})`)
    const { nKvHeads, headDim } = this.shape
    const keys = new Float32Array(this.rowValues)
    const values = new Float32Array(this.rowValues)
    for (let h = 0; h < nKvHeads; h++) {
      values.set(this.valueBuffers[l].subarray((h * this.cap + pos) * headDim, (h * this.cap + pos + 1) * headDim), h * headDim)
      for (let d = 0; d < headDim; d++) keys[h * headDim + d] = this.keyBuffers[l][(h * headDim + d) * this.cap + pos]
    }
    return { keys, values }
  }
}
