/**
 * @file Runtime checks for values that cross a process boundary (IPC messages between the benchmark's
 * parent and its children) or come from an untyped module (node-llama-cpp, loaded from bench/peers
 * without its types so `tsc` passes when the peers are not installed). Each helper validates and
 * names what was wrong instead of casting.
 */

/** A plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `value` as an object, or throws naming `what`. */
export function record(value: unknown, what: string): Record<string, unknown> {
  if (!isRecord(value)) throw new TypeError(`${what}: expected an object, got ${describe(value)}`)
  return value
}

/** A finite number field. */
export function numberField(obj: Record<string, unknown>, key: string, what: string): number {
  const v = obj[key]
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${what}.${key}: expected a finite number, got ${describe(v)}`)
  return v
}

/** A string field. */
export function stringField(obj: Record<string, unknown>, key: string, what: string): string {
  const v = obj[key]
  if (typeof v !== 'string') throw new TypeError(`${what}.${key}: expected a string, got ${describe(v)}`)
  return v
}

/** A boolean field. */
export function booleanField(obj: Record<string, unknown>, key: string, what: string): boolean {
  const v = obj[key]
  if (typeof v !== 'boolean') throw new TypeError(`${what}.${key}: expected a boolean, got ${describe(v)}`)
  return v
}

/** An array of finite numbers. */
export function numberArray(value: unknown, what: string): number[] {
  if (!Array.isArray(value)) throw new TypeError(`${what}: expected an array, got ${describe(value)}`)
  return value.map((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new TypeError(`${what}[${i}]: expected a finite number, got ${describe(v)}`)
    return v
  })
}

/** Reads a property of an object from an untyped module; throws when `obj` is not an object. */
export function prop(obj: unknown, key: string, what: string): unknown {
  if ((typeof obj !== 'object' && typeof obj !== 'function') || obj === null) {
    throw new TypeError(`${what}: expected an object with '${key}', got ${describe(obj)}`)
  }
  return Reflect.get(obj, key)
}

/** Calls method `key` of an untyped object with `args`; throws when it is not a function. */
export function callMethod(obj: unknown, key: string, what: string, ...args: unknown[]): unknown {
  const fn = prop(obj, key, what)
  if (typeof fn !== 'function') throw new TypeError(`${what}.${key} is not a function (${describe(fn)})`)
  const result: unknown = Reflect.apply(fn, obj, args)
  return result
}

/** A short description of a value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return `array(${value.length})`
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  return typeof value === 'object' ? 'object' : `${typeof value} ${String(value)}`
}
