/**
 * @file A KV cache's rows as snapshot bytes, and back. Rows are per layer, position-major ([count, nKvHeads·headDim]
 * keys and values: what KvCache.readRows gives and KvCache.write takes). A block of `count` positions is, for each
 * layer in order, its keys then its values, each value as float32 or float16 little-endian. The format is part of
 * the snapshot's fingerprint, so bytes of one format are never read as the other.
 */
import { f16ToF32, f32ToF16 } from '../model'

/** How snapshot values are stored: exact float32, or float16 (half the bytes). */
export type KvFormat = 'f32' | 'f16'

/** Every format, in the order they are described. */
export const KV_FORMATS: readonly KvFormat[] = ['f32', 'f16']

/** Per layer, position-major keys and values [count, rowValues]. */
export interface KvRows {
  readonly keys: readonly Float32Array[]
  readonly values: readonly Float32Array[]
}

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

/** Encodes `count` positions of `rows` as snapshot bytes. */
export function encodeKvRows(rows: KvRows, count: number, layout: KvLayout, format: KvFormat): Uint8Array {
  const n = count * layout.rowValues
  if (rows.keys.length !== layout.nLayers || rows.values.length !== layout.nLayers) throw new RangeError(`expected ${layout.nLayers} layers of K/V rows`)
  const out = new Uint8Array(count * kvBytesPerToken(layout, format))
  const view = new DataView(out.buffer)
  let at = 0
  const put = (src: Float32Array): void => {
    if (src.length !== n) throw new RangeError(`expected ${n} values per layer, got ${src.length}`)
    if (format === 'f32') {
      for (let i = 0; i < n; i++, at += 4) view.setFloat32(at, src[i], true)
    } else {
      for (let i = 0; i < n; i++, at += 2) view.setUint16(at, f32ToF16(src[i]), true)
    }
  }
  for (let l = 0; l < layout.nLayers; l++) {
    put(rows.keys[l])
    put(rows.values[l])
  }
  return out
}

/** Decodes snapshot bytes of `count` positions; throws unless the length is exactly what the layout needs. */
export function decodeKvRows(bytes: Uint8Array, count: number, layout: KvLayout, format: KvFormat): KvRows {
  const want = count * kvBytesPerToken(layout, format)
  if (bytes.byteLength !== want) throw new RangeError(`a KV block of ${count} positions needs ${want} bytes, got ${bytes.byteLength}`)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const n = count * layout.rowValues
  let at = 0
  const take = (): Float32Array => {
    const out = new Float32Array(n)
    if (format === 'f32') {
      for (let i = 0; i < n; i++, at += 4) out[i] = view.getFloat32(at, true)
    } else {
      for (let i = 0; i < n; i++, at += 2) out[i] = f16ToF32(view.getUint16(at, true))
    }
    return out
  }
  const keys: Float32Array[] = []
  const values: Float32Array[] = []
  for (let l = 0; l < layout.nLayers; l++) {
    keys.push(take())
    values.push(take())
  }
  return { keys, values }
}
