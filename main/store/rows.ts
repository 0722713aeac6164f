/**
 * @file Reading database rows into typed values without trusting them: better-sqlite3 returns `unknown`
 * rows, and each column is checked for the type the schema promises. A mismatch throws StoreDataError
 * naming the table, row and column. JSON values are checked the same way.
 */
import { FieldReader, isRecord } from '../common/reader'
import { StoreDataError } from './errors'

/** A value JSON can represent. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject

/** A JSON object (what `sampling_json` holds). */
export interface JsonObject {
  readonly [key: string]: JsonValue
}

/** Nesting limit for stored JSON (settings, sampling); generous for settings, and stops runaway recursion. */
export const MAX_JSON_DEPTH = 64

/** Checks a JSON value deeply (finite numbers, plain objects and arrays only) and returns it typed. */
export function toJsonValue(value: unknown, depth = 0): JsonValue | undefined {
  // JSON.parse output is never deeper than its input, but values passed in by callers might be cyclic.
  if (depth > MAX_JSON_DEPTH) return undefined
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (Array.isArray(value)) {
    const out: JsonValue[] = []
    for (const item of value) {
      const v = toJsonValue(item, depth + 1)
      if (v === undefined) return undefined
      out.push(v)
    }
    return out
  }
  if (isRecord(value)) return toJsonObject(value, depth)
  return undefined
}

/** Like toJsonValue, for objects; undefined when `value` is not a plain JSON object. */
export function toJsonObject(value: unknown, depth = 0): JsonObject | undefined {
  // Plain objects only: a Map, Set or class instance would otherwise be stored as its own fields ({} for a Map).
  if (!isRecord(value)) return undefined
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return undefined
  const out: Record<string, JsonValue> = {}
  for (const [key, item] of Object.entries(value)) {
    // Skipped like JSON.stringify does, so `{ topK: options.topK }` with topK unset is accepted.
    if (item === undefined) continue
    const v = toJsonValue(item, depth + 1)
    if (v === undefined) return undefined
    out[key] = v
  }
  return out
}

/** Parses JSON text; undefined (never a throw) when it is not valid JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Column readers bound to one row, so errors can name the table, the row id and the column. */
export class RowReader {
  private readonly columns: FieldReader

  constructor(table: string, row: unknown, keyColumn = 'id') {
    if (!isRecord(row)) throw new StoreDataError(table, undefined, `expected a row object, got ${typeof row}`)
    const key = row[keyColumn]
    const rowKey = typeof key === 'string' ? key : undefined
    this.columns = new FieldReader((column, detail) => {
      throw new StoreDataError(table, rowKey, `column ${column}: ${detail}`)
    }, '', row)
  }

  /** A TEXT NOT NULL column. */
  text(column: string): string {
    return this.columns.text(column, Number.MAX_SAFE_INTEGER)
  }

  /** A nullable TEXT column. */
  textOrNull(column: string): string | null {
    return this.columns.textOrNull(column, Number.MAX_SAFE_INTEGER)
  }

  /** An INTEGER NOT NULL column (times in ms, sequence numbers); must be a safe integer. */
  int(column: string): number {
    return this.columns.int(column, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
  }

  /** A nullable INTEGER column. */
  intOrNull(column: string): number | null {
    return this.columns.intOrNull(column, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
  }

  /** A BLOB NOT NULL column. */
  blob(column: string): Uint8Array {
    const v = this.columns.raw(column)
    if (!(v instanceof Uint8Array)) this.columns.reject(column, 'expected a blob')
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
  }

  /** A nullable BLOB column. */
  blobOrNull(column: string): Uint8Array | null {
    return this.columns.raw(column) === null ? null : this.blob(column)
  }

  /** A TEXT column holding one of `allowed`. */
  oneOf<T extends string>(column: string, allowed: readonly T[]): T {
    return this.columns.choice(column, allowed)
  }
}
