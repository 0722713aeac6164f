/** @file Typed, validated lookups of GGUF metadata keys. */
import { ModelFormatError } from './errors'
import type { GgufArray, GgufHeader, GgufValue } from './gguf'

/**
 * Typed lookups over parsed metadata. A missing key gives null; a present key of the wrong type or out
 * of range is a ModelFormatError naming the key, so loaders never act on a value they did not expect.
 */
export class GgufMetadata {
  constructor(private readonly header: GgufHeader) {}

  private fail(key: string, detail: string): never {
    throw new ModelFormatError(this.header.file, `metadata ${key}: ${detail}`)
  }

  get(key: string): GgufValue | null {
    return this.header.metadata.get(key) ?? null
  }

  string(key: string): string | null {
    const v = this.get(key)
    if (v === null) return null
    if (v.type !== 'string') this.fail(key, `has type ${v.type}, expected string`)
    return v.value
  }

  bool(key: string): boolean | null {
    const v = this.get(key)
    if (v === null) return null
    if (v.type !== 'bool') this.fail(key, `has type ${v.type}, expected bool`)
    return v.value
  }

  /** Any integer type, as a number in [min, max]. */
  integer(key: string, min: number, max: number): number | null {
    const v = this.get(key)
    if (v === null) return null
    let n: number
    if (v.type === 'u64' || v.type === 'i64') {
      if (v.value < BigInt(min) || v.value > BigInt(max)) this.fail(key, `${v.value} is outside [${min}, ${max}]`)
      n = Number(v.value)
    } else if (v.type === 'u8' || v.type === 'i8' || v.type === 'u16' || v.type === 'i16' || v.type === 'u32' || v.type === 'i32') {
      n = v.value
    } else {
      this.fail(key, `has type ${v.type}, expected an integer`)
    }
    if (n < min || n > max) this.fail(key, `${n} is outside [${min}, ${max}]`)
    return n
  }

  /** Any numeric type, as a finite number. */
  number(key: string): number | null {
    const v = this.get(key)
    if (v === null) return null
    if (v.type === 'bool' || v.type === 'string' || v.type === 'array') this.fail(key, `has type ${v.type}, expected a number`)
    const n = Number(v.value)
    if (!Number.isFinite(n)) this.fail(key, `${n} is not a finite number`)
    return n
  }

  array(key: string): GgufArray | null {
    const v = this.get(key)
    if (v === null) return null
    if (v.type !== 'array') this.fail(key, `has type ${v.type}, expected an array`)
    return v.value
  }

  stringArray(key: string): readonly string[] | null {
    const a = this.array(key)
    if (a === null) return null
    if (a.itemType !== 'string') this.fail(key, `is an array of ${a.itemType}, expected strings`)
    return a.values
  }

  /** An array of any non-64-bit numeric item type. */
  numberArray(key: string): readonly number[] | null {
    const a = this.array(key)
    if (a === null) return null
    switch (a.itemType) {
      case 'string':
      case 'bool':
      case 'array':
      case 'u64':
      case 'i64':
        return this.fail(key, `is an array of ${a.itemType}, expected numbers`)
      default:
        return a.values
    }
  }
}
