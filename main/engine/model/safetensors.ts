/**
 * @file safetensors reader: u64 LE header length, a JSON header mapping names to {dtype, shape,
 * data_offsets}, then the raw little-endian data. Every header field is checked against the file before
 * any tensor view is made. The file is opened through file-read (regular files only, bounded reads).
 */
import { isRecord } from '../../common/reader'
import { closeSync } from 'node:fs'
import { BinaryReader } from './binary-reader'
import { ModelFormatError } from './errors'
import { openRegularFile, readPrefix } from './file-read'
import type { DenseDType, Tensor } from './types'

/** Largest JSON header accepted (the format's own reference implementation uses 100 MB). */
export const MAX_SAFETENSORS_HEADER_BYTES = 100_000_000
/** Most dimensions a tensor may have. */
export const MAX_TENSOR_NDIMS = 8
/** Most tensors in one file (a 405B shard holds a few thousand). */
export const MAX_SAFETENSORS_TENSORS = 1_000_000

/** safetensors dtype name -> our encoding and element size. */
const DTYPES: Readonly<Record<string, { dtype: DenseDType; bytes: number }>> = {
  F32: { dtype: 'f32', bytes: 4 },
  F16: { dtype: 'f16', bytes: 2 },
  BF16: { dtype: 'bf16', bytes: 2 }
}

/** One tensor's header entry; offsets are absolute file positions. */
export interface SafetensorsEntry {
  readonly name: string
  readonly dtype: DenseDType
  readonly shape: readonly number[]
  readonly begin: number
  readonly end: number
}

/** The parsed header of one file. */
export interface SafetensorsHeader {
  readonly file: string
  readonly fileSizeBytes: number
  readonly entries: ReadonlyMap<string, SafetensorsEntry>
}

function isIndex(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
}

/** A JSON list of non-negative integers, or null. */
function indexList(value: unknown): number[] | null {
  if (!Array.isArray(value)) return null
  const items: readonly unknown[] = value
  const out: number[] = []
  for (const v of items) {
    if (!isIndex(v)) return null
    out.push(v)
  }
  return out
}

/** Validates the header held in `head` (at least 8 + header length bytes) for a file of `fileSizeBytes`. */
function parseHeader(head: Uint8Array, fileSizeBytes: number, file: string): SafetensorsHeader {
  const r: BinaryReader = new BinaryReader(head, file)
  if (fileSizeBytes < 8) r.fail(`file is ${fileSizeBytes} bytes, too short for the 8-byte header length`, 0)
  const headerBytes = r.u64Limited('header length', MAX_SAFETENSORS_HEADER_BYTES)
  const dataStart = 8 + headerBytes
  if (dataStart > fileSizeBytes) {
    r.fail(`header length ${headerBytes} runs past the end of the file (${fileSizeBytes} bytes)`, 0)
  }
  let json: unknown
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(r.bytesView(headerBytes, 'JSON header')))
  } catch (e) {
    if (e instanceof ModelFormatError) throw e
    r.fail(`header is not valid UTF-8 JSON: ${e instanceof Error ? e.message : String(e)}`, 8)
  }
  if (!isRecord(json)) r.fail('header must be a JSON object', 8)
  const dataSize = fileSizeBytes - dataStart
  const entries = new Map<string, SafetensorsEntry>()
  for (const [name, value] of Object.entries(json)) {
    if (name === '__metadata__') continue
    if (entries.size >= MAX_SAFETENSORS_TENSORS) r.fail(`more than ${MAX_SAFETENSORS_TENSORS} tensors`, 8)
    const where = `tensor "${name}"`
    if (!isRecord(value)) r.fail(`${where} must be an object with dtype, shape and data_offsets`, 8)
    const dtype = value.dtype
    if (typeof dtype !== 'string') r.fail(`${where}: dtype must be a string`, 8)
    const info = Object.hasOwn(DTYPES, dtype) ? DTYPES[dtype] : undefined
    if (!info) r.fail(`${where}: dtype ${dtype} is not supported (supported: ${Object.keys(DTYPES).join(', ')})`, 8)
    const shape = indexList(value.shape)
    if (!shape || shape.length > MAX_TENSOR_NDIMS) {
      r.fail(`${where}: shape must be a list of at most ${MAX_TENSOR_NDIMS} non-negative integers`, 8)
    }
    const offsets = indexList(value.data_offsets)
    if (!offsets || offsets.length !== 2) r.fail(`${where}: data_offsets must be [begin, end] integers`, 8)
    const [begin, end] = offsets
    if (begin > end || end > dataSize) {
      r.fail(`${where}: data_offsets [${begin}, ${end}] lie outside the data section (${dataSize} bytes)`, 8)
    }
    // Multiply with a running bound so a huge shape cannot overflow past the check.
    let sizeBytes = info.bytes
    for (const d of shape) {
      sizeBytes *= d
      if (sizeBytes > dataSize) r.fail(`${where}: shape [${shape.join(', ')}] needs more bytes than the data section holds (${dataSize})`, 8)
    }
    if (sizeBytes !== end - begin) {
      r.fail(`${where}: ${dtype} [${shape.join(', ')}] needs ${sizeBytes} bytes but data_offsets span ${end - begin}`, 8)
    }
    entries.set(name, { name, dtype: info.dtype, shape, begin: dataStart + begin, end: dataStart + end })
  }
  const sorted = [...entries.values()].filter((e) => e.end > e.begin).sort((a, b) => a.begin - b.begin)
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i].begin < sorted[i - 1].end) {
      r.fail(`tensors "${sorted[i - 1].name}" and "${sorted[i].name}" overlap in the data section`, sorted[i].begin)
    }
  }
  return { file, fileSizeBytes, entries }
}

/** Parses and validates only the header (reads 8 + header-length bytes from disk). */
export function readSafetensorsHeader(path: string): SafetensorsHeader {
  const file = openRegularFile(path, 'safetensors file')
  try {
    const lengthBytes = readPrefix(file, 8)
    const r: BinaryReader = new BinaryReader(lengthBytes, path)
    if (lengthBytes.length < 8) r.fail(`file is ${file.sizeBytes} bytes, too short for the 8-byte header length`, 0)
    const headerBytes = r.u64Limited('header length', MAX_SAFETENSORS_HEADER_BYTES)
    return parseHeader(readPrefix(file, Math.min(8 + headerBytes, file.sizeBytes)), file.sizeBytes, path)
  } finally {
    closeSync(file.fd)
  }
}

/** Parses a whole in-memory file: header plus tensors as views into `bytes` (no copies). */
export function parseSafetensors(bytes: Uint8Array, file: string): { header: SafetensorsHeader; tensors: Map<string, Tensor> } {
  const header = parseHeader(bytes, bytes.byteLength, file)
  const tensors = new Map<string, Tensor>()
  for (const e of header.entries.values()) {
    tensors.set(e.name, {
      name: e.name,
      shape: e.shape,
      data: { kind: 'dense', dtype: e.dtype, bytes: bytes.subarray(e.begin, e.end) }
    })
  }
  return { header, tensors }
}
