/**
 * @file The KV snapshot byte layout. A block of `count` positions is, for each layer in order, its keys as
 * nKvHeads·headDim channel runs of `count` values (one per head and dimension: the rows of the cache's transposed
 * keys), then its values as nKvHeads·count runs of headDim values (one per head and position). So every run is
 * contiguous in the cache as well as in the block: saving and restoring copy runs instead of gathering values one by
 * one across the cache (which made a 2,048-token restore of a 110M model spend most of its time in cache misses).
 *
 * - 'f32': the runs' float32 values back to back (exact).
 * - 'f16': the same as float16 (half the bytes; llama.cpp's default KV type).
 * - 'i8': each run as its float32 scale (max |v| / 127, little-endian) followed by its values as int8 — so scales
 *   are per channel for keys and per token and head for values, KIVI's split (keys have outlier channels, values
 *   do not). A quarter of float32, plus 4 bytes per run.
 *
 * In every format a block is its layers' sections back to back, so a cache split across devices by layer (device
 * workers) reads and writes each layer's section on the device that holds it. The format is part of the snapshot's
 * fingerprint, so bytes of one format are never read as another.
 */
import { f16ToF32BitsTable, f32ToF16 } from '../model'

/** How snapshot values are stored. */
export type KvFormat = 'f32' | 'f16' | 'i8'

/** Every format, in the order they are described. */
export const KV_FORMATS: readonly KvFormat[] = ['f32', 'f16', 'i8']

/** Bumped when the block layout changes, so older snapshots stop matching. */
export const KV_SNAPSHOT_LAYOUT_VERSION = 2

/** The KV geometry a snapshot depends on. */
export interface KvLayout {
  readonly nLayers: number
  readonly nKvHeads: number
  readonly headDim: number
}

/** The KV layout of a model. */
export function kvLayoutOf(config: KvLayout): KvLayout {
  return { nLayers: config.nLayers, nKvHeads: config.nKvHeads, headDim: config.headDim }
}

/** Values in a block of `count` positions. */
function kvValues(layout: KvLayout, count: number): number {
  return 2 * layout.nLayers * layout.nKvHeads * layout.headDim * count
}

/** Runs in a block of `count` positions: key channels plus value (head, position) pairs, per layer. */
function kvRuns(layout: KvLayout, count: number): number {
  return layout.nLayers * layout.nKvHeads * (layout.headDim + count)
}

/** Bytes a block of `count` positions takes in `format`. */
export function kvBlockBytes(layout: KvLayout, format: KvFormat, count: number): number {
  const values = kvValues(layout, count)
  if (format === 'f32') return values * 4
  if (format === 'f16') return values * 2
  return values + 4 * kvRuns(layout, count)
}

/**
 * One block's runs, in layout order, as places in float32 buffers: the KV cache calls `visit` for each run (its
 * buffer, the run's first index and length), so the codecs read and write the cache in place.
 */
export type KvRuns = (visit: (buffer: Float32Array, offset: number, length: number) => void) => void

const F16_TO_F32 = new Float32Array(f16ToF32BitsTable().slice().buffer)
const I8_LEVELS = 127

/** The block bytes of `runs` (which must hold a block of `count` positions of `layout`). */
export function encodeKvBlock(layout: KvLayout, format: KvFormat, count: number, runs: KvRuns): Uint8Array {
  const bytes = new Uint8Array(kvBlockBytes(layout, format, count))
  let at = 0
  if (format === 'f32') {
    const out = new Float32Array(bytes.buffer)
    runs((buf, offset, length) => {
      out.set(buf.subarray(offset, offset + length), at)
      at += length
    })
  } else if (format === 'f16') {
    const out = new Uint16Array(bytes.buffer)
    runs((buf, offset, length) => {
      for (let i = 0; i < length; i++) out[at + i] = f32ToF16(buf[offset + i])
      at += length
    })
  } else {
    const view = new DataView(bytes.buffer)
    const out = new Int8Array(bytes.buffer)
    runs((buf, offset, length) => {
      let max = 0
      for (let i = 0; i < length; i++) max = Math.max(max, Math.abs(buf[offset + i]))
      const scale = Math.fround(max / I8_LEVELS)
      view.setFloat32(at, scale, true)
      at += 4
      // a run of zeros keeps scale 0 and int8 zeros; the clamp guards against rounding up past 127
      if (scale > 0) for (let i = 0; i < length; i++) out[at + i] = Math.max(-I8_LEVELS, Math.min(I8_LEVELS, Math.round(buf[offset + i] / scale)))
      at += length
    })
  }
  return bytes
}

/** Writes block `bytes` (checked for their length) into `runs`; copies them once when not aligned for their format. */
export function decodeKvBlock(layout: KvLayout, format: KvFormat, count: number, bytes: Uint8Array, runs: KvRuns): void {
  const want = kvBlockBytes(layout, format, count)
  if (!Number.isInteger(count) || count < 1 || bytes.byteLength !== want) throw new RangeError(`a KV block of ${count} positions needs ${want} bytes, got ${bytes.byteLength}`)
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice()
  let at = 0
  if (format === 'f32') {
    const src = new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4)
    runs((buf, offset, length) => {
      buf.set(src.subarray(at, at + length), offset)
      at += length
    })
  } else if (format === 'f16') {
    const src = new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2)
    runs((buf, offset, length) => {
      for (let i = 0; i < length; i++) buf[offset + i] = F16_TO_F32[src[at + i]]
      at += length
    })
  } else {
    const view = new DataView(aligned.buffer, aligned.byteOffset, aligned.byteLength)
    const src = new Int8Array(aligned.buffer, aligned.byteOffset, aligned.byteLength)
    runs((buf, offset, length) => {
      const scale = view.getFloat32(at, true)
      at += 4
      for (let i = 0; i < length; i++) buf[offset + i] = src[at + i] * scale
      at += length
    })
  }
}
