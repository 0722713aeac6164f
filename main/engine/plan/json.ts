/**
 * @file Small guards for reading untrusted JSON (placement files, UI input, profile rows from SQLite) into
 * typed values without casts: every reader names the path of the field it checks, so errors point at it.
 */

/** A plain JSON object (not an array, not null). */
export type JsonRecord = { readonly [key: string]: unknown }

/** Type guard: a plain object. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** How a reader reports a problem at a path (it throws the caller's own error type). */
export type Fail = (path: string, detail: string) => never

/** Short, safe rendering of an untrusted value for an error message. */
export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value)
  if (value === undefined) return 'nothing'
  return Array.isArray(value) ? 'an array' : 'an object'
}

/** The object at `path`, with exactly the allowed keys (required ones present, no unknown ones). */
export function readRecord(fail: Fail, path: string, value: unknown, required: readonly string[], optional: readonly string[] = []): JsonRecord {
  if (!isRecord(value)) fail(path, `expected an object, got ${show(value)}`)
  for (const key of Object.keys(value)) {
    if (!required.includes(key) && !optional.includes(key)) fail(path, `unknown field ${JSON.stringify(key)} (allowed: ${[...required, ...optional].join(', ')})`)
  }
  for (const key of required) if (!Object.hasOwn(value, key)) fail(path, `missing field ${JSON.stringify(key)}`)
  return value
}

/** The array at `path`, at most `max` long. */
export function readArray(fail: Fail, path: string, value: unknown, max: number): readonly unknown[] {
  if (!Array.isArray(value)) fail(path, `expected an array, got ${show(value)}`)
  if (value.length > max) fail(path, `${value.length} entries is more than the limit of ${max}`)
  return value
}

/** A non-empty string of at most `maxLength` characters. */
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

/** An integer in [min, max]. */
export function readInteger(fail: Fail, path: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) fail(path, `expected an integer, got ${show(value)}`)
  if (value < min || value > max) fail(path, `${value} is out of range [${min}, ${max}]`)
  return value
}

/** One of `choices` (compared as strings). */
export function readChoice<T extends string>(fail: Fail, path: string, value: unknown, choices: readonly T[]): T {
  const found = choices.find((c) => c === value)
  if (found === undefined) fail(path, `${show(value)} is not one of ${choices.join(', ')}`)
  return found
}
