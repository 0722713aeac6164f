/**
 * @file The one reader for data that crosses a boundary (worker messages, JSON files, IPC and HTTP
 * arguments, database JSON): untrusted `unknown` in, typed values out, no casts. Every check names the
 * path of the field it reads ("request.tokens[3]"), and the caller decides which error is thrown by
 * passing a `Fail` — ProtocolError on the worker wire, PlacementError for placements, ModelFormatError for
 * model files — so one set of rules serves every boundary.
 *
 * Two forms: value readers (`readInteger(fail, path, value, …)`) for values that stand alone (array items,
 * a top-level value), and a `FieldReader` bound to one object that reads its fields by key, in the style
 * of the store's RowReader.
 */

/** A plain object as JSON and structured clone deliver it (not an array, not null). */
export type JsonRecord = { readonly [key: string]: unknown }

/** How a reader reports a problem at `path`; it throws the boundary's own error type. */
export type Fail = (path: string, detail: string) => never

/** A Fail that throws `make("path: detail")` (just the detail when the path is empty). */
export function failWith(make: (message: string) => Error): Fail {
  return (path, detail) => {
    throw make(path === '' ? detail : `${path}: ${detail}`)
  }
}

/** Type guard: a plain object (not null, not an array); its fields can then be read as unknown. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Short, safe rendering of an untrusted value for an error message (strings cut at 40 characters). */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value)
  if (value === undefined) return 'nothing'
  return Array.isArray(value) ? 'an array' : 'an object'
}

/** `path.key`, or `key` at the root. */
export function fieldPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`
}

/**
 * The object at `path`. With `required`, its keys are exactly `required` plus any of `optional` (a typo is
 * an error, not an ignored field); without, any keys.
 */
export function readRecord(fail: Fail, path: string, value: unknown, required?: readonly string[], optional: readonly string[] = []): JsonRecord {
  if (!isRecord(value)) fail(path, `expected an object, got ${show(value)}`)
  if (required === undefined) return value
  for (const key of Object.keys(value)) {
    if (!required.includes(key) && !optional.includes(key)) fail(path, `unknown field ${JSON.stringify(key.slice(0, 50))} (allowed: ${[...required, ...optional].join(', ')})`)
  }
  for (const key of required) if (!Object.hasOwn(value, key)) fail(path, `missing field ${JSON.stringify(key)}`)
  return value
}

/** The array at `path`, at most `max` long (and at least `min`). */
export function readArray(fail: Fail, path: string, value: unknown, max: number, min = 0): readonly unknown[] {
  if (!Array.isArray(value)) fail(path, `expected an array, got ${show(value)}`)
  if (min === max && value.length !== max) fail(path, `expected ${max} ${max === 1 ? 'entry' : 'entries'}, got ${value.length}`)
  if (value.length > max) fail(path, `${value.length} entries is more than the limit of ${max}`)
  if (value.length < min) fail(path, `${value.length} entries is fewer than the required ${min}`)
  return value
}

/** A string of at most `maxLength` characters, possibly empty. */
export function readText(fail: Fail, path: string, value: unknown, maxLength: number): string {
  if (typeof value !== 'string') fail(path, `expected a string, got ${show(value)}`)
  if (value.length > maxLength) fail(path, `${value.length} characters is more than the limit of ${maxLength}`)
  return value
}

/** A string with at least one non-space character, of at most `maxLength` characters. */
export function readString(fail: Fail, path: string, value: unknown, maxLength: number): string {
  if (typeof value !== 'string' || value.trim().length === 0) fail(path, `expected a non-empty string, got ${show(value)}`)
  if (value.length > maxLength) fail(path, `${value.length} characters is more than the limit of ${maxLength}`)
  return value
}

/** A finite number in [min, max]. */
export function readNumber(fail: Fail, path: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(path, `expected a finite number, got ${show(value)}`)
  if (value < min || value > max) fail(path, `${value} is out of range [${min}, ${max}]`)
  return value
}

/** An integer in [min, max] (bounds inside the safe-integer range). */
export function readInteger(fail: Fail, path: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) fail(path, `expected an integer, got ${show(value)}`)
  if (value < min || value > max) fail(path, `${value} is out of range [${min}, ${max}]`)
  return value
}

/** true or false. */
export function readBoolean(fail: Fail, path: string, value: unknown): boolean {
  if (typeof value !== 'boolean') fail(path, `expected true or false, got ${show(value)}`)
  return value
}

/** One of `choices` (compared as strings). */
export function readChoice<T extends string>(fail: Fail, path: string, value: unknown, choices: readonly T[]): T {
  const found = choices.find((c) => c === value)
  if (found === undefined) fail(path, `${show(value)} is not one of ${choices.join(', ')}`)
  return found
}

/** Reads the fields of one object; every error names `path.key`. */
export class FieldReader {
  /** the object itself */
  readonly value: JsonRecord

  /** Fails unless `value` is an object; with `required`, also unless its keys are `required` plus any of `optional`. */
  constructor(
    private readonly fail: Fail,
    readonly path: string,
    value: unknown,
    required?: readonly string[],
    optional?: readonly string[]
  ) {
    this.value = readRecord(fail, path, value, required, optional)
  }

  /** The raw field (for values read by their own domain reader). */
  raw(key: string): unknown {
    return this.value[key]
  }

  /** The path of a field, for nested readers. */
  at(key: string): string {
    return fieldPath(this.path, key)
  }

  /** Fails at `key` with `detail` (a check the typed readers do not cover). */
  reject(key: string, detail: string): never {
    return this.fail(this.at(key), detail)
  }

  int(key: string, min: number, max: number): number {
    return readInteger(this.fail, this.at(key), this.value[key], min, max)
  }

  /** An integer field that may be null. */
  intOrNull(key: string, min: number, max: number): number | null {
    return this.value[key] === null ? null : this.int(key, min, max)
  }

  /** An integer field that may be absent (undefined). */
  optionalInt(key: string, min: number, max: number): number | undefined {
    return this.value[key] === undefined ? undefined : this.int(key, min, max)
  }

  number(key: string, min: number, max: number): number {
    return readNumber(this.fail, this.at(key), this.value[key], min, max)
  }

  /** A number field that may be null. */
  numberOrNull(key: string, min: number, max: number): number | null {
    return this.value[key] === null ? null : this.number(key, min, max)
  }

  bool(key: string): boolean {
    return readBoolean(this.fail, this.at(key), this.value[key])
  }

  /** A non-blank string of at most `maxLength` characters. */
  string(key: string, maxLength: number): string {
    return readString(this.fail, this.at(key), this.value[key], maxLength)
  }

  /** A non-blank string field that may be absent (undefined). */
  optionalString(key: string, maxLength: number): string | undefined {
    return this.value[key] === undefined ? undefined : this.string(key, maxLength)
  }

  /** Any string (empty allowed) of at most `maxLength` characters. */
  text(key: string, maxLength: number): string {
    return readText(this.fail, this.at(key), this.value[key], maxLength)
  }

  /** A string field (empty allowed) that may be null. */
  textOrNull(key: string, maxLength: number): string | null {
    return this.value[key] === null ? null : this.text(key, maxLength)
  }

  choice<T extends string>(key: string, choices: readonly T[]): T {
    return readChoice(this.fail, this.at(key), this.value[key], choices)
  }

  /** An array field of at most `max` (and at least `min`) entries, items unread. */
  list(key: string, max: number, min = 0): readonly unknown[] {
    return readArray(this.fail, this.at(key), this.value[key], max, min)
  }

  /** An array of non-blank strings of at most `maxLength` characters each. */
  strings(key: string, max: number, maxLength: number): string[] {
    return this.list(key, max).map((v, i) => readString(this.fail, `${this.at(key)}[${i}]`, v, maxLength))
  }

  /** An array of `minEntries..maxEntries` integers in [minValue, maxValue]. */
  ints(key: string, maxEntries: number, minValue: number, maxValue: number, minEntries = 0): number[] {
    return this.list(key, maxEntries, minEntries).map((v, i) => readInteger(this.fail, `${this.at(key)}[${i}]`, v, minValue, maxValue))
  }

  /** A nested object field, as its own reader. */
  record(key: string, required?: readonly string[], optional?: readonly string[]): FieldReader {
    return new FieldReader(this.fail, this.at(key), this.value[key], required, optional)
  }

  /** An object field of at most `maxEntries` string values of at most `maxLength` characters (keys too). */
  stringMap(key: string, maxEntries: number, maxLength: number): Record<string, string> {
    const inner = this.record(key)
    const keys = Object.keys(inner.value)
    if (keys.length > maxEntries) this.reject(key, `more than ${maxEntries} entries`)
    const out: Record<string, string> = {}
    for (const k of keys) {
      if (k.length === 0 || k.length > maxLength) this.reject(key, `a key must be 1–${maxLength} characters`)
      out[k] = inner.string(k, maxLength)
    }
    return out
  }

  /** Each entry of an array field read by `read(reader of the entry, index)`. */
  records<T>(key: string, max: number, read: (entry: FieldReader, index: number) => T): T[] {
    return this.list(key, max).map((v, i) => read(new FieldReader(this.fail, `${this.at(key)}[${i}]`, v), i))
  }
}
