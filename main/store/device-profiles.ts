/**
 * @file Cached device profiles (measured op-group times, see the engine's plan/profile.ts), keyed by the
 * device set (ready device ids with their EPs, the ONNX Runtime version, ...) and the model shape. The
 * store does not know the profile's shape: reads take the caller's validator (the engine's parseProfile).
 * A cache is only worth what it saves, so a row that no longer reads — corrupt JSON, a profile from an
 * older format — is deleted and reported as a miss (the caller measures again), never thrown at the user.
 */
import type { Db, Stmt } from './database'
import { parseJson, RowReader, toJsonValue } from './rows'
import type { Validator } from './settings'
import type { StoreOptions } from './types'

/** Longest device-set or shape key (characters): a few dozen devices with their names. */
export const MAX_PROFILE_KEY_LENGTH = 8192
/** Largest stored profile (bytes of JSON): 32 devices × 9 groups × 64 samples is well under 1 MiB. */
export const MAX_PROFILE_JSON_BYTES = 4 * 1024 * 1024

function checkKey(what: string, key: string): void {
  if (key.length === 0 || key.length > MAX_PROFILE_KEY_LENGTH) throw new RangeError(`${what} must be 1..${MAX_PROFILE_KEY_LENGTH} characters, got ${key.length}`)
}

/** The device_profiles table; statements are prepared once here. */
export class DeviceProfileStore {
  private readonly getStmt: Stmt
  private readonly putStmt: Stmt
  private readonly deleteStmt: Stmt
  private readonly clearStmt: Stmt
  private readonly now: () => number

  constructor(db: Db, options: StoreOptions = {}) {
    this.now = options.now ?? Date.now
    this.getStmt = db.prepare('SELECT device_key, profile_json FROM device_profiles WHERE device_key = ? AND shape_key = ?')
    this.putStmt = db.prepare(
      `INSERT INTO device_profiles (device_key, shape_key, profile_json, created_at) VALUES (@deviceKey, @shapeKey, @json, @createdAt)
       ON CONFLICT (device_key, shape_key) DO UPDATE SET profile_json = excluded.profile_json, created_at = excluded.created_at`
    )
    this.deleteStmt = db.prepare('DELETE FROM device_profiles WHERE device_key = ? AND shape_key = ?')
    this.clearStmt = db.prepare('DELETE FROM device_profiles')
  }

  /**
   * The cached profile for these keys, validated; null when there is none, or when the stored row does not
   * read (not JSON, a bad column, `validate` throws) — that row is deleted so the next put replaces it.
   */
  get<T>(deviceKey: string, shapeKey: string, validate: Validator<T>): T | null {
    const row = this.getStmt.get(deviceKey, shapeKey)
    if (row === undefined) return null
    try {
      const value = parseJson(new RowReader('device_profiles', row, 'device_key').text('profile_json'))
      if (value === undefined) throw new Error('profile_json is not valid JSON')
      return validate(value)
    } catch {
      this.deleteStmt.run(deviceKey, shapeKey)
      return null
    }
  }

  /** Stores (or replaces) the profile for these keys, stamped now; throws for a value JSON cannot hold or one too large. */
  put(deviceKey: string, shapeKey: string, profile: unknown): void {
    checkKey('device key', deviceKey)
    checkKey('shape key', shapeKey)
    const value = toJsonValue(profile)
    if (value === undefined) throw new TypeError('device profile is not representable as JSON')
    const json = JSON.stringify(value)
    const bytes = Buffer.byteLength(json, 'utf8')
    if (bytes > MAX_PROFILE_JSON_BYTES) throw new RangeError(`device profile is ${bytes} bytes of JSON, more than the limit of ${MAX_PROFILE_JSON_BYTES}`)
    this.putStmt.run({ deviceKey, shapeKey, json, createdAt: this.now() })
  }

  /** Removes the profile for these keys (measure again); returns whether one was stored. */
  delete(deviceKey: string, shapeKey: string): boolean {
    return this.deleteStmt.run(deviceKey, shapeKey).changes > 0
  }

  /** Removes every cached profile; returns how many there were. */
  clear(): number {
    return this.clearStmt.run().changes
  }
}
