/**
 * @file The KV snapshot byte layout: a block of `count` positions is, for each layer in order, its keys then its
 * values, each position-major [count, nKvHeads·headDim], each value float32 or float16 little-endian. KvCache reads
 * and writes it straight from and into its buffers (no intermediate float copies: a 2,048-token snapshot of a 110M
 * model is 75 MB). The format is part of the snapshot's fingerprint, so bytes of one format are never read as the other.
 */
import { f16ToF32BitsTable, f32ToF16 } from '../model'

/** How snapshot values are stored: exact float32, or float16 (half the bytes). */
export type KvFormat = 'f32' | 'f16'

/** Every format, in the order they are described. */
export const KV_FORMATS: readonly KvFormat[] = ['f32', 'f16']

/** The KV geometry a snapshot depends on. */
export interface KvLayout {
  readonly nLayers: number
  /** floats per position per layer and kind: nKvHeads · headDim */
  readonly rowValues: number
}

/** The KV layout of a model. */
export function kvLayoutOf(config: { readonly nLayers: number; readonly nKvHeads: number; readonly headDim: number }): KvLayout {
  return { nLayers: config.nLayers, rowValues: config.nKvHeads * config.headDim }
}

const BYTES: Readonly<Record<KvFormat, number>> = { f32: 4, f16: 2 }

/** Bytes one position takes in a snapshot: keys and values of every layer. */
export function kvBytesPerToken(layout: KvLayout, format: KvFormat): number {
  return 2 * layout.nLayers * layout.rowValues * BYTES[format]
}

/** Snapshot bytes read value by value, as float32 bit patterns (copied once when not aligned to the value size). */
export interface KvValueReader {
  bits(i: number): number
}

/** Reads snapshot bytes value by value: KvCache walks its own layout and decodes straight into its buffers. */
export function kvReader(bytes: Uint8Array, format: KvFormat): KvValueReader {
  const size = BYTES[format]
  const aligned = bytes.byteOffset % size === 0 ? bytes : bytes.slice()
  if (format === 'f32') {
    const u32 = new Uint32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 4)
    return { bits: (i) => u32[i] }
  }
  const u16 = new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength / 2)
  const table = f16ToF32BitsTable()
  return { bits: (i) => table[u16[i]] }
}

/** Snapshot bytes for `values` values, written value by value from numbers. */
export function kvWriter(values: number, format: KvFormat): { readonly bytes: Uint8Array; set(i: number, v: number): void } {
  const bytes = new Uint8Array(values * BYTES[format])
  if (format === 'f32') {
    const f32 = new Float32Array(bytes.buffer)
    return { bytes, set: (i, v) => void (f32[i] = v) }
  }
  const u16 = new Uint16Array(bytes.buffer)
  return { bytes, set: (i, v) => void (u16[i] = f32ToF16(v)) }
}
