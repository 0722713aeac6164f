/**
 * @file Reading database rows into typed values without trusting them: better-sqlite3 returns `unknown`
 * rows, and each column is checked for the type the schema promises. A mismatch throws StoreDataError
 * naming the table, row and column. JSON values are checked the same way.
 */
import { StoreDataError } from './errors'

/** A value JSON can represent. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | JsonObject

/** A JSON object (what `sampling_json` holds). */
export interface JsonObject {
  readonly [key: string]: JsonValue
}

/** Nesting limit for stored JSON (settings, sampling); generous for settings, and stops runaway recursion. */
export const MAX_JSON_DEPTH = 64

/** True for a non-null, non-array object; narrows so its fields can be read as `unknown`. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

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
  private readonly row: Record<string, unknown>
  private readonly rowKey: string | undefined

  constructor(
    private readonly table: string,
    row: unknown,
    keyColumn = 'id'
  ) {
    if (!isRecord(row)) throw new StoreDataError(table, undefined, `expected a row object, got ${typeof row}`)
    this.row = row
    const key = row[keyColumn]
    this.rowKey = typeof key === 'string' ? key : undefined
  }

  /** A TEXT NOT NULL column. */
  text(column: string): string {
    const v = this.row[column]
    if (typeof v !== 'string') throw this.bad(column, 'text', v)
    return v
  }

  /** A nullable TEXT column. */
  textOrNull(column: string): string | null {
    const v = this.row[column]
    if (v === null) return null
    if (typeof v !== 'string') throw this.bad(column, 'text or NULL', v)
    return v
  }

  /** An INTEGER NOT NULL column (times in ms, sequence numbers); must be a safe integer. */
  int(column: string): number {
    const v = this.row[column]
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw this.bad(column, 'an integer', v)
    return v
  }

  /** A nullable INTEGER column. */
  intOrNull(column: string): number | null {
    const v = this.row[column]
    if (v === null) return null
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw this.bad(column, 'an integer or NULL', v)
    return v
  }

  /** A TEXT column holding one of `allowed`. */
  oneOf<T extends string>(column: string, allowed: readonly T[]): T {
    const v = this.row[column]
    const match = allowed.find((a) => a === v)
    if (match === undefined) throw this.bad(column, `one of ${allowed.join(', ')}`, v)
    return match
  }

  private bad(column: string, expected: string, got: unknown): StoreDataError {
    const shown = typeof got === 'string' ? JSON.stringify(got.slice(0, 40)) : String(got)
    return new StoreDataError(this.table, this.rowKey, `column ${column} should be ${expected}, got ${typeof got} ${shown}`)
  }
}
