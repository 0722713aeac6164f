/** @file Limits both worker wire protocols (the model worker's and the device workers') check what they receive against. */
import type { FieldReader } from '../../common/reader'

/** Largest position or context length accepted on the wire. */
export const MAX_POSITION = 1 << 24
/** Longest path (or session key) accepted on the wire. */
export const MAX_PATH_LENGTH = 4096
/** Largest KV snapshot block one request carries (bytes). */
export const MAX_KV_WIRE_BYTES = 1 << 30

/** The snapshot bytes in field `key`: a Uint8Array of at most MAX_KV_WIRE_BYTES (both protocols carry them). */
export function kvBytesField(r: FieldReader, key: string): Uint8Array {
  const data = r.raw(key)
  if (!(data instanceof Uint8Array) || data.byteLength > MAX_KV_WIRE_BYTES) return r.reject(key, `expected a Uint8Array of at most ${MAX_KV_WIRE_BYTES} bytes`)
  return data
}
