/**
 * @file Key-value settings stored as JSON. The store does not know the settings' shapes: every read and
 * write takes a validator from the caller, which turns an `unknown` JSON value into a `T` or throws.
 */
import type { Db, Stmt } from './database'
import { StoreDataError } from './errors'
import { parseJson, RowReader, toJsonValue } from './rows'

/** Turns a parsed JSON value into a T, throwing (any error) when it does not fit. */
export type Validator<T> = (value: unknown) => T

/** The settings table; statements are prepared once here. */
export class SettingsStore {
  private readonly getStmt: Stmt
  private readonly setStmt: Stmt
  private readonly deleteStmt: Stmt
  private readonly keysStmt: Stmt

  constructor(db: Db) {
    this.getStmt = db.prepare('SELECT key, value_json FROM settings WHERE key = ?')
    this.setStmt = db.prepare(
      'INSERT INTO settings (key, value_json) VALUES (@key, @valueJson) ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json'
    )
    this.deleteStmt = db.prepare('DELETE FROM settings WHERE key = ?')
    this.keysStmt = db.prepare('SELECT key FROM settings ORDER BY key').pluck()
  }

  /**
   * The stored value, validated; undefined when the key is not set. Throws StoreDataError naming the key
   * when the stored text is not JSON or `validate` rejects it (e.g. a value written by another version).
   */
  get<T>(key: string, validate: Validator<T>): T | undefined {
    const row = this.getStmt.get(key)
    if (row === undefined) return undefined
    const text = new RowReader('settings', row, 'key').text('value_json')
    const value = parseJson(text)
    if (value === undefined) throw new StoreDataError('settings', key, 'value_json is not valid JSON')
    try {
      return validate(value)
    } catch (err) {
      throw new StoreDataError('settings', key, `stored value rejected: ${err instanceof Error ? err.message : String(err)}`)
    }
  }

  /** Like get, but returns `fallback` when the key is unset or its stored value is corrupt or rejected. */
  getOr<T>(key: string, validate: Validator<T>, fallback: T): T {
    try {
      return this.get(key, validate) ?? fallback
    } catch (err) {
      if (err instanceof StoreDataError) return fallback
      throw err
    }
  }

  /**
   * Stores `value` as JSON after checking that what will be read back passes `validate` (so a value that
   * JSON cannot represent — NaN, a Map, undefined — is refused now, not on the next start).
   */
  set<T>(key: string, value: T, validate: Validator<T>): void {
    const json = toJsonValue(value)
    if (json === undefined) throw new TypeError(`setting ${JSON.stringify(key)}: value is not representable as JSON`)
    const valueJson = JSON.stringify(json)
    validate(parseJson(valueJson))
    this.setStmt.run({ key, valueJson })
  }

  /** Removes a key; returns whether it was set. */
  delete(key: string): boolean {
    return this.deleteStmt.run(key).changes > 0
  }

  /** All keys that are set, sorted. */
  keys(): string[] {
    return this.keysStmt.all().filter((k): k is string => typeof k === 'string')
  }
}
