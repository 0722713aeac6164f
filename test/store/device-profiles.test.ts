/**
 * @file The device-profile cache on real SQLite files: round trip through the engine's parseProfile, keys
 * kept apart, replace on put, corrupt rows read as a miss and are deleted, and the v1 -> v2 migration
 * keeping existing data.
 */
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseProfile, type Profile } from '../../main/engine/plan'
import {
  LATEST_SCHEMA_VERSION,
  MAX_PROFILE_JSON_BYTES,
  MIGRATIONS,
  openDatabase,
  openStore,
  schemaVersion
} from '../../main/store'
import { syntheticProfile, testConfig } from '../plan/fixtures'
import { tempDir } from '../helpers/paths'
import { storeFixture, type StoreFixture } from './fixture'

const DEVICES = 'onnxruntime 1.30.0; threads default; cpu=cpu (CPU), webgpu-0=webgpu (Software GPU)'
const SHAPE = 'llama dim=64 hidden=172 layers=5 heads=8/4x8 vocab=512 weights=f32'

function profile(fixedMs = 0.01): Profile {
  return syntheticProfile(testConfig(), { cpu: { rest: { fixedMs, perTokenMs: 0.001 }, runOverheadMs: 0.05 } }, [], { fixedMs: 0.02, msPerMiB: 0.3 })
}

let f: StoreFixture
beforeEach(() => {
  f = storeFixture()
})
afterEach(() => f.dispose())

describe('device profile cache', () => {
  it('round-trips a profile through parseProfile, across a reopen, and misses on other keys', () => {
    const p = profile()
    f.store.deviceProfiles.put(DEVICES, SHAPE, p)
    expect(f.store.deviceProfiles.get(DEVICES, SHAPE, parseProfile)).toEqual(p)
    const again = f.reopen()
    expect(again.deviceProfiles.get(DEVICES, SHAPE, parseProfile)).toEqual(p)
    expect(again.deviceProfiles.get(DEVICES, `${SHAPE} other`, parseProfile)).toBeNull()
    expect(again.deviceProfiles.get(`${DEVICES}, cpu-2=cpu (CPU)`, SHAPE, parseProfile)).toBeNull()
  })

  it('replaces the profile and its time on a second put for the same keys', () => {
    f.store.deviceProfiles.put(DEVICES, SHAPE, profile(0.01))
    f.clock.advance(60_000)
    f.store.deviceProfiles.put(DEVICES, SHAPE, profile(0.5))
    expect(f.store.deviceProfiles.get(DEVICES, SHAPE, parseProfile)).toEqual(profile(0.5))
    const rows = f.store.db.prepare('SELECT created_at FROM device_profiles').pluck().all()
    expect(rows).toEqual([f.clock.now()])
  })

  it('reads a row the validator rejects as a miss, deletes it, and accepts a fresh put', () => {
    f.store.deviceProfiles.put(DEVICES, SHAPE, profile())
    // a profile written by a future format version
    f.store.db.prepare("UPDATE device_profiles SET profile_json = json_set(profile_json, '$.version', 99)").run()
    expect(f.store.deviceProfiles.get(DEVICES, SHAPE, parseProfile)).toBeNull()
    expect(f.store.db.prepare('SELECT COUNT(*) FROM device_profiles').pluck().get()).toBe(0)
    f.store.deviceProfiles.put(DEVICES, SHAPE, profile())
    expect(f.store.deviceProfiles.get(DEVICES, SHAPE, parseProfile)).toEqual(profile())
  })

  it('reads bytes that are not JSON (damage past the CHECK) as a miss and deletes the row', () => {
    f.store.deviceProfiles.put(DEVICES, SHAPE, profile())
    f.store.close()
    const raw = new Database(f.file)
    raw.pragma('ignore_check_constraints = ON')
    raw.prepare("UPDATE device_profiles SET profile_json = '{\"version\": 1, \"devi'").run()
    raw.close()
    const store = f.reopen()
    expect(store.deviceProfiles.get(DEVICES, SHAPE, parseProfile)).toBeNull()
    expect(store.db.prepare('SELECT COUNT(*) FROM device_profiles').pluck().get()).toBe(0)
  })

  it('refuses values JSON cannot hold, oversized profiles and empty keys, storing nothing', () => {
    const p = profile()
    expect(() => f.store.deviceProfiles.put(DEVICES, SHAPE, { ...p, defaultLink: { fixedMs: Number.NaN, msPerMiB: 0 } })).toThrow(/not representable as JSON/)
    expect(() => f.store.deviceProfiles.put(DEVICES, SHAPE, { ...p, modelShape: 'x'.repeat(MAX_PROFILE_JSON_BYTES) })).toThrow(/more than the limit/)
    expect(() => f.store.deviceProfiles.put('', SHAPE, p)).toThrow(RangeError)
    expect(f.store.db.prepare('SELECT COUNT(*) FROM device_profiles').pluck().get()).toBe(0)
  })

  it('deletes one profile and clears the rest', () => {
    const profiles = f.store.deviceProfiles
    profiles.put(DEVICES, SHAPE, profile())
    profiles.put(DEVICES, `${SHAPE} q8`, profile(0.2))
    expect(profiles.get(DEVICES, SHAPE, parseProfile)).toEqual(profile())
    expect(profiles.delete(DEVICES, SHAPE)).toBe(true)
    expect(profiles.delete(DEVICES, SHAPE)).toBe(false)
    expect(profiles.get(DEVICES, SHAPE, parseProfile)).toBeNull()
    expect(profiles.clear()).toBe(1)
  })
})

describe('migration to the device-profiles schema', () => {
  let scratch: ReturnType<typeof tempDir>
  beforeEach(() => {
    scratch = tempDir('tandem-store-')
  })
  afterEach(() => scratch.dispose())

  it('upgrades a v1 file in place, keeping its conversations, and then caches profiles', () => {
    const file = join(scratch.dir, 'tandem.db')
    const v1 = openDatabase(file, MIGRATIONS.slice(0, 1))
    // a v1 row written as v1 wrote it (today's ConversationStore reads columns v1 did not have)
    const c = { id: 'c-from-v1' }
    v1.prepare(`INSERT INTO conversations (id, title, system_prompt, model_id, sampling_json, created_at, updated_at) VALUES (?, 'from v1', '', NULL, '{}', 1, 1)`).run(c.id)
    expect(schemaVersion(v1)).toBe(1)
    v1.close()

    const store = openStore(file)
    try {
      expect(schemaVersion(store.db)).toBe(LATEST_SCHEMA_VERSION)
      expect(LATEST_SCHEMA_VERSION).toBeGreaterThanOrEqual(2)
      expect(store.conversations.get(c.id)?.title).toBe('from v1')
      store.deviceProfiles.put(DEVICES, SHAPE, profile())
      expect(store.deviceProfiles.get(DEVICES, SHAPE, parseProfile)).toEqual(profile())
      expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok')
    } finally {
      store.close()
    }
  })
})
