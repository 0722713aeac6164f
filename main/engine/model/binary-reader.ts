/**
 * @file Bounds-checked little-endian reads over file bytes. Every read checks `offset + n <= byteLength`
 * first, so a lying length or offset becomes a ModelFormatError naming the file and field, never a
 * RangeError, a garbage value or a huge allocation.
 */
import { ModelFormatError } from './errors'

export class BinaryReader {
  private readonly view: DataView
  /** current read position in bytes */
  offset = 0

  constructor(
    readonly bytes: Uint8Array,
    readonly file: string
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  get byteLength(): number {
    return this.bytes.byteLength
  }

  get remaining(): number {
    return this.bytes.byteLength - this.offset
  }

  /** Throws unless `n` more bytes exist at the current offset. */
  need(n: number, field: string): void {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.remaining) {
      throw new ModelFormatError(
        this.file,
        `file ends inside ${field}: needs ${n} bytes, ${this.remaining} left (truncated or corrupt)`,
        this.offset
      )
    }
  }

  fail(detail: string, at = this.offset): never {
    throw new ModelFormatError(this.file, detail, at)
  }

  u8(field: string): number {
    this.need(1, field)
    return this.view.getUint8(this.offset++)
  }

  i8(field: string): number {
    this.need(1, field)
    return this.view.getInt8(this.offset++)
  }

  u16(field: string): number {
    this.need(2, field)
    const v = this.view.getUint16(this.offset, true)
    this.offset += 2
    return v
  }

  i16(field: string): number {
    this.need(2, field)
    const v = this.view.getInt16(this.offset, true)
    this.offset += 2
    return v
  }

  u32(field: string): number {
    this.need(4, field)
    const v = this.view.getUint32(this.offset, true)
    this.offset += 4
    return v
  }

  i32(field: string): number {
    this.need(4, field)
    const v = this.view.getInt32(this.offset, true)
    this.offset += 4
    return v
  }

  /** u64 stays bigint until the caller has compared it with a limit. */
  u64(field: string): bigint {
    this.need(8, field)
    const v = this.view.getBigUint64(this.offset, true)
    this.offset += 8
    return v
  }

  i64(field: string): bigint {
    this.need(8, field)
    const v = this.view.getBigInt64(this.offset, true)
    this.offset += 8
    return v
  }

  f32(field: string): number {
    this.need(4, field)
    const v = this.view.getFloat32(this.offset, true)
    this.offset += 4
    return v
  }

  f64(field: string): number {
    this.need(8, field)
    const v = this.view.getFloat64(this.offset, true)
    this.offset += 8
    return v
  }

  /** A u64 that must be at most `max`, returned as a number. */
  u64Limited(field: string, max: number): number {
    const at = this.offset
    const v = this.u64(field)
    if (v > BigInt(max)) this.fail(`${field} is ${v}, more than the limit ${max}`, at)
    return Number(v)
  }

  /** `n` raw bytes as a view into the file (no copy). */
  bytesView(n: number, field: string): Uint8Array {
    this.need(n, field)
    const v = this.bytes.subarray(this.offset, this.offset + n)
    this.offset += n
    return v
  }

  utf8(n: number, field: string): string {
    return new TextDecoder('utf-8', { fatal: false }).decode(this.bytesView(n, field))
  }

  skip(n: number, field: string): void {
    this.need(n, field)
    this.offset += n
  }

  seek(offset: number, field: string): void {
    if (!Number.isSafeInteger(offset) || offset < 0 || offset > this.byteLength) {
      this.fail(`${field} points to byte ${offset}, outside the file (${this.byteLength} bytes)`)
    }
    this.offset = offset
  }
}
