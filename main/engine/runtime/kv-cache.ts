/**
 * @file The KV cache, owned by the runtime (not by ONNX Runtime): per layer one K and one V buffer
 * [maxLen, nKvHeads, headDim] float32, position-major, so the valid prefix [0, length) is one contiguous
 * `subarray` view that is passed to each run as past_k/past_v without a copy. Runs return only the new
 * rows, which are appended here.
 */

/** Cache geometry. */
export interface KvCacheShape {
  readonly nLayers: number
  readonly nKvHeads: number
  readonly headDim: number
  /** positions the buffers hold */
  readonly maxLen: number
}

/** Largest cache we allocate per buffer (values); a Float32Array cannot exceed 2^32 − 1 elements anyway. */
export const MAX_KV_BUFFER_VALUES = 2 ** 31

/** Per-layer K/V buffers plus the number of valid positions. */
export class KvCache {
  readonly keys: Float32Array[]
  readonly values: Float32Array[]
  /** floats per position: nKvHeads · headDim */
  readonly rowValues: number
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
    this.keys = Array.from({ length: nLayers }, () => new Float32Array(maxLen * this.rowValues))
    this.values = Array.from({ length: nLayers }, () => new Float32Array(maxLen * this.rowValues))
  }

  /** Number of cached positions (the next position to run). */
  get length(): number {
    return this.validLength
  }

  /** Bytes held by all buffers. */
  get sizeBytes(): number {
    return 2 * this.shape.nLayers * this.shape.maxLen * this.rowValues * 4
  }

  /** Views of layer `l`'s valid prefix [length, nKvHeads, headDim] (no copy). */
  past(l: number): { keys: Float32Array; values: Float32Array } {
    const end = this.validLength * this.rowValues
    return { keys: this.keys[l].subarray(0, end), values: this.values[l].subarray(0, end) }
  }

  /**
   * Writes `count` new rows for layer `l` at the current end (rows [S, nKvHeads, headDim]). Call for
   * every layer, then `commit(count)`.
   */
  write(l: number, newKeys: Float32Array, newValues: Float32Array, count: number): void {
    const n = count * this.rowValues
    if (this.validLength + count > this.shape.maxLen) throw new RangeError(`KV cache full: ${this.validLength} + ${count} > ${this.shape.maxLen}`)
    if (newKeys.length !== n || newValues.length !== n) throw new RangeError(`layer ${l}: expected ${n} new K/V values, got ${newKeys.length}/${newValues.length}`)
    const at = this.validLength * this.rowValues
    this.keys[l].set(newKeys, at)
    this.values[l].set(newValues, at)
  }

  /** Makes `count` rows written by `write` part of the valid prefix. */
  commit(count: number): void {
    if (!Number.isInteger(count) || count < 0 || this.validLength + count > this.shape.maxLen) {
      throw new RangeError(`cannot commit ${count} rows at ${this.validLength} (max ${this.shape.maxLen})`)
    }
    this.validLength += count
  }

  /** Rewinds to `pos` cached positions (e.g. to regenerate); positions ≥ pos become free. */
  truncate(pos: number): void {
    if (!Number.isInteger(pos) || pos < 0 || pos > this.validLength) {
      throw new RangeError(`cannot truncate the KV cache to ${pos}: it holds ${this.validLength} positions`)
    }
    this.validLength = pos
  }
}
