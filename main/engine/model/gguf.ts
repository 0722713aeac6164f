/**
 * @file GGUF (v2/v3, little-endian) container parser: header, typed metadata, tensor table, data-section
 * layout. It never trusts a count, length or offset: each is compared (as bigint when it is a u64) with a
 * named limit and with the file size before any loop or allocation, and tensor ranges are checked to lie
 * inside the file without overlapping. It may run on a prefix of the file (header-only loads): when it
 * needs bytes the prefix lacks but the file has, it throws GgufNeedMoreBytes and the caller reads more.
 */
import type { BinaryReader } from './binary-reader'
import { ModelFormatError } from './errors'
import { ggmlTypeById, unsupportedGgmlTypeMessage, type GgmlTypeInfo } from './ggml'

/** Tensors per file. The largest published models have a few thousand (MoE experts are merged per layer). */
export const MAX_TENSOR_COUNT = 1 << 20
/** Metadata pairs per file. Real files have tens to a few hundred; this only stops runaway loops. */
export const MAX_KV_COUNT = 1 << 20
/** Bytes in one metadata string. Chat templates (the longest) are tens of KiB; 16 MiB is generous. */
export const MAX_STRING_LENGTH = 16 << 20
/** Bytes in a key or tensor name. ggml caps tensor names at 63 bytes and llama.cpp keys are short. */
export const MAX_NAME_LENGTH = 1024
/** Items in one metadata array. The largest vocabularies (~256k tokens, ~500k merges) fit easily. */
export const MAX_ARRAY_LENGTH = 1 << 24
/** Tensor rank; ggml tensors have at most 4 dimensions (GGML_MAX_DIMS). */
export const MAX_DIMS = 4
/** One dimension's extent. 2^32 is far above any vocab or width and keeps products exact below 2^53. */
export const MAX_DIM = 2 ** 32
/** Arrays of arrays. No known key nests at all; a small bound keeps recursion shallow on hostile input. */
export const MAX_NESTING_DEPTH = 4
/** `general.alignment`. Writers use 32 (default) to 4096 (page size); larger values only waste the file. */
export const MAX_ALIGNMENT = 1 << 16

/** Alignment of tensor data when `general.alignment` is absent (GGUF spec). */
export const GGUF_DEFAULT_ALIGNMENT = 32

export type GgufNumberType = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'f64'
export type GgufBigIntType = 'u64' | 'i64'

/** A metadata array: homogeneous items of one GGUF type. */
export type GgufArray =
  | { readonly itemType: GgufNumberType; readonly values: readonly number[] }
  | { readonly itemType: GgufBigIntType; readonly values: readonly bigint[] }
  | { readonly itemType: 'bool'; readonly values: readonly boolean[] }
  | { readonly itemType: 'string'; readonly values: readonly string[] }
  | { readonly itemType: 'array'; readonly values: readonly GgufArray[] }

/** One typed metadata value. */
export type GgufValue =
  | { readonly type: GgufNumberType; readonly value: number }
  | { readonly type: GgufBigIntType; readonly value: bigint }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'array'; readonly value: GgufArray }

/** GGUF value type ids (gguf_type) in id order. */
const VALUE_TYPES = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'bool', 'string', 'array', 'u64', 'i64', 'f64'] as const
type ValueTypeName = (typeof VALUE_TYPES)[number]

/** Bytes the smallest encoding of one item of each type takes (a string is at least its u64 length). */
const MIN_ITEM_BYTES: Readonly<Record<ValueTypeName, number>> = {
  u8: 1, i8: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, bool: 1, string: 8, array: 12, u64: 8, i64: 8, f64: 8
}

/** One entry of the tensor table. */
export interface GgufTensorInfo {
  readonly name: string
  /** extents innermost-first, as GGUF stores them ([64, 512] = 512 rows of 64) */
  readonly dims: readonly number[]
  readonly type: GgmlTypeInfo
  /** byte offset inside the data section */
  readonly offset: number
  /** byte offset inside the file */
  readonly absoluteOffset: number
  readonly sizeBytes: number
  readonly elementCount: number
}

/** Everything before the tensor data. */
export interface GgufHeader {
  readonly file: string
  readonly version: number
  readonly metadata: ReadonlyMap<string, GgufValue>
  readonly tensors: readonly GgufTensorInfo[]
  readonly alignment: number
  /** file offset where the data section starts */
  readonly dataOffset: number
  readonly fileSizeBytes: number
}

/** Thrown when parsing a prefix of the file needs bytes beyond it; read at least `neededBytes` and retry. */
export class GgufNeedMoreBytes extends Error {
  override readonly name = 'GgufNeedMoreBytes'
  constructor(readonly neededBytes: number) {
    super(`GGUF header needs the first ${neededBytes} bytes`)
  }
}

const GGUF_MAGIC = 'GGUF'
const utf8Decoder = new TextDecoder('utf-8', { fatal: false })

/**
 * Parses the header of a GGUF file. `reader` holds the whole file or a prefix of it; `fileSizeBytes`
 * is the real file size (all range checks use it).
 */
export function parseGguf(reader: BinaryReader, fileSizeBytes = reader.byteLength): GgufHeader {
  return new GgufParser(reader, fileSizeBytes).parse()
}

class GgufParser {
  constructor(
    private readonly r: BinaryReader,
    private readonly fileSize: number
  ) {}

  private fail(detail: string, at = this.r.offset): never {
    throw new ModelFormatError(this.r.file, detail, at)
  }

  /** Makes sure `n` bytes can be read: from the prefix, or by asking the caller for more of the file. */
  private ensure(n: number, field: string): void {
    if (n <= this.r.remaining) return
    const end = this.r.offset + n
    if (end <= this.fileSize && this.r.byteLength < this.fileSize) throw new GgufNeedMoreBytes(end)
    this.fail(`file ends inside ${field}: needs ${n} bytes, ${this.fileSize - this.r.offset} left (truncated or corrupt)`)
  }

  private u32(field: string): number {
    this.ensure(4, field)
    return this.r.u32(field)
  }

  /** A u64 count or size, compared with `max` while still a bigint. */
  private u64Limited(field: string, max: number): number {
    this.ensure(8, field)
    return this.r.u64Limited(field, max)
  }

  private string(field: string, maxBytes: number): string {
    const len = this.u64Limited(`${field} length`, maxBytes)
    this.ensure(len, field)
    return utf8Decoder.decode(this.r.bytesView(len, field))
  }

  parse(): GgufHeader {
    this.ensure(4, 'magic')
    const magic = String.fromCharCode(...this.r.bytesView(4, 'magic'))
    if (magic !== GGUF_MAGIC) this.fail(`not a GGUF file (magic ${JSON.stringify(magic)}, expected "GGUF")`, 0)
    const version = this.u32('version')
    if (version !== 2 && version !== 3) {
      // A big-endian file's version word reads byte-swapped here (3 -> 0x03000000).
      const swapped = ((version & 0xff) << 24) | ((version & 0xff00) << 8) | ((version >>> 8) & 0xff00) | (version >>> 24)
      if (swapped >= 1 && swapped <= 3) this.fail('big-endian GGUF files are not supported (only little-endian)', 4)
      if (version === 1) this.fail('GGUF version 1 is not supported (re-convert the model with a current llama.cpp)', 4)
      this.fail(`unsupported GGUF version ${version} (supported: 2, 3)`, 4)
    }
    const tensorCount = this.u64Limited('tensor count', MAX_TENSOR_COUNT)
    const kvCount = this.u64Limited('metadata count', MAX_KV_COUNT)
    // Each pair takes at least 8 (key length) + 4 (type) + 1 bytes, each tensor info at least 8+4+8+4+8.
    if (kvCount * 13 + tensorCount * 32 > this.fileSize - this.r.offset) {
      this.fail(`${kvCount} metadata pairs and ${tensorCount} tensors cannot fit in a ${this.fileSize}-byte file`, 8)
    }
    const metadata = new Map<string, GgufValue>()
    for (let i = 0; i < kvCount; i++) {
      const at = this.r.offset
      const key = this.string(`metadata key ${i}`, MAX_NAME_LENGTH)
      if (key.length === 0) this.fail(`metadata key ${i} is empty`, at)
      if (metadata.has(key)) this.fail(`duplicate metadata key ${key}`, at)
      metadata.set(key, this.value(this.valueType(`type of ${key}`), key, 0))
    }
    const alignment = this.alignment(metadata)
    const tensors = this.tensorInfos(tensorCount, alignment)
    const dataOffset = Math.ceil(this.r.offset / alignment) * alignment
    const placed = tensors.map((t) => ({ ...t, absoluteOffset: dataOffset + t.offset }))
    this.checkRanges(placed)
    return { file: this.r.file, version, metadata, tensors: placed, alignment, dataOffset, fileSizeBytes: this.fileSize }
  }

  private valueType(field: string): ValueTypeName {
    const at = this.r.offset
    const id = this.u32(field)
    const t = VALUE_TYPES[id]
    if (t === undefined) this.fail(`${field}: unknown GGUF value type ${id}`, at)
    return t
  }

  private value(type: ValueTypeName, key: string, depth: number): GgufValue {
    switch (type) {
      case 'u64':
      case 'i64': {
        this.ensure(8, key)
        return { type, value: type === 'u64' ? this.r.u64(key) : this.r.i64(key) }
      }
      case 'bool':
        return { type, value: this.bool(key) }
      case 'string':
        return { type, value: this.string(key, MAX_STRING_LENGTH) }
      case 'array':
        return { type, value: this.array(key, depth + 1) }
      default:
        return { type, value: this.number(type, key) }
    }
  }

  private number(type: GgufNumberType, field: string): number {
    this.ensure(MIN_ITEM_BYTES[type], field)
    switch (type) {
      case 'u8': return this.r.u8(field)
      case 'i8': return this.r.i8(field)
      case 'u16': return this.r.u16(field)
      case 'i16': return this.r.i16(field)
      case 'u32': return this.r.u32(field)
      case 'i32': return this.r.i32(field)
      case 'f32': return this.r.f32(field)
      case 'f64': return this.r.f64(field)
    }
  }

  private bool(field: string): boolean {
    this.ensure(1, field)
    const at = this.r.offset
    const b = this.r.u8(field)
    if (b > 1) this.fail(`${field}: bool value ${b} is neither 0 nor 1`, at)
    return b === 1
  }

  private array(key: string, depth: number): GgufArray {
    if (depth > MAX_NESTING_DEPTH) this.fail(`${key}: arrays nested deeper than ${MAX_NESTING_DEPTH}`)
    const itemType = this.valueType(`${key} item type`)
    const at = this.r.offset
    const n = this.u64Limited(`${key} array length`, MAX_ARRAY_LENGTH)
    if (n * MIN_ITEM_BYTES[itemType] > this.fileSize - this.r.offset) {
      this.fail(`${key}: ${n} items of ${itemType} cannot fit in the rest of the file`, at)
    }
    switch (itemType) {
      case 'u64':
      case 'i64': {
        this.ensure(n * 8, key)
        const values: bigint[] = new Array<bigint>(n)
        for (let i = 0; i < n; i++) values[i] = itemType === 'u64' ? this.r.u64(key) : this.r.i64(key)
        return { itemType, values }
      }
      case 'bool': {
        const values: boolean[] = new Array<boolean>(n)
        for (let i = 0; i < n; i++) values[i] = this.bool(key)
        return { itemType, values }
      }
      case 'string': {
        const values: string[] = new Array<string>(n)
        for (let i = 0; i < n; i++) values[i] = this.string(key, MAX_STRING_LENGTH)
        return { itemType, values }
      }
      case 'array': {
        const values: GgufArray[] = new Array<GgufArray>(n)
        for (let i = 0; i < n; i++) values[i] = this.array(key, depth + 1)
        return { itemType, values }
      }
      default: {
        this.ensure(n * MIN_ITEM_BYTES[itemType], key)
        const values: number[] = new Array<number>(n)
        for (let i = 0; i < n; i++) values[i] = this.number(itemType, key)
        return { itemType, values }
      }
    }
  }

  private alignment(metadata: ReadonlyMap<string, GgufValue>): number {
    const v = metadata.get('general.alignment')
    if (v === undefined) return GGUF_DEFAULT_ALIGNMENT
    if (v.type !== 'u32' && v.type !== 'u16' && v.type !== 'u8') this.fail(`general.alignment has type ${v.type}, expected u32`, 0)
    const a = v.value
    if (a < 1 || a > MAX_ALIGNMENT || (a & (a - 1)) !== 0) {
      this.fail(`general.alignment ${a} is not a power of two in [1, ${MAX_ALIGNMENT}]`, 0)
    }
    return a
  }

  private tensorInfos(count: number, alignment: number): Omit<GgufTensorInfo, 'absoluteOffset'>[] {
    const infos: Omit<GgufTensorInfo, 'absoluteOffset'>[] = []
    const names = new Set<string>()
    for (let i = 0; i < count; i++) {
      const at = this.r.offset
      const name = this.string(`tensor ${i} name`, MAX_NAME_LENGTH)
      if (names.has(name)) this.fail(`duplicate tensor name ${name}`, at)
      names.add(name)
      const nDims = this.u32(`${name} rank`)
      if (nDims < 1 || nDims > MAX_DIMS) this.fail(`tensor ${name} has ${nDims} dimensions (allowed 1..${MAX_DIMS})`, at)
      const dims: number[] = []
      let elements = 1n
      for (let d = 0; d < nDims; d++) {
        const extent = this.u64Limited(`${name} dimension ${d}`, MAX_DIM)
        if (extent === 0) this.fail(`tensor ${name} has an empty dimension ${d}`, at)
        dims.push(extent)
        elements *= BigInt(extent)
      }
      const typeAt = this.r.offset
      const typeId = this.u32(`${name} type`)
      const type = ggmlTypeById(typeId)
      if (!type) this.fail(`tensor ${name}: ${unsupportedGgmlTypeMessage(typeId)}`, typeAt)
      if (dims[0] % type.blockElems !== 0) {
        this.fail(`tensor ${name}: innermost dimension ${dims[0]} is not a multiple of the ${type.name} block size ${type.blockElems}`, at)
      }
      const sizeBytes = (elements / BigInt(type.blockElems)) * BigInt(type.blockBytes)
      if (sizeBytes > BigInt(this.fileSize)) {
        this.fail(`tensor ${name} [${dims.join(', ')}] ${type.name} needs ${sizeBytes} bytes, more than the whole file`, at)
      }
      const offsetAt = this.r.offset
      // compared with the file in checkRanges, once the data section start is known
      const offset = this.u64Limited(`${name} data offset`, Number.MAX_SAFE_INTEGER)
      if (offset % alignment !== 0) this.fail(`tensor ${name} data offset ${offset} is not a multiple of the alignment ${alignment}`, offsetAt)
      infos.push({ name, dims, type, offset, sizeBytes: Number(sizeBytes), elementCount: Number(elements) })
    }
    return infos
  }

  /** Every tensor lies inside the file and no two share bytes. */
  private checkRanges(tensors: readonly GgufTensorInfo[]): void {
    for (const t of tensors) {
      if (t.absoluteOffset + t.sizeBytes > this.fileSize) {
        this.fail(`tensor ${t.name} data [${t.absoluteOffset}, ${t.absoluteOffset + t.sizeBytes}) lies outside the file (${this.fileSize} bytes)`, t.absoluteOffset)
      }
    }
    const byOffset = [...tensors].sort((a, b) => a.offset - b.offset)
    for (let i = 1; i < byOffset.length; i++) {
      const prev = byOffset[i - 1]
      const cur = byOffset[i]
      if (cur.offset < prev.offset + prev.sizeBytes) {
        this.fail(`tensor ${cur.name} data overlaps tensor ${prev.name}`, cur.absoluteOffset)
      }
    }
  }
}
