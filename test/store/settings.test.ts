/** @file SettingsStore on a real file: caller-validated JSON values, corrupt values, persistence. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { StoreDataError, type Validator } from '../../main/store'
import { storeFixture, type StoreFixture } from './fixture'

let f: StoreFixture
beforeEach(() => {
  f = storeFixture()
})
afterEach(() => f.dispose())

interface Placement {
  readonly devices: readonly string[]
  readonly maxTokens: number
}

/** A caller's validator, as a service would write it: field by field, throwing on anything else. */
const placement: Validator<Placement> = (v) => {
  if (typeof v !== 'object' || v === null || !('devices' in v) || !('maxTokens' in v)) throw new Error('not a placement')
  const { devices, maxTokens } = v
  if (!Array.isArray(devices) || !devices.every((d): d is string => typeof d === 'string')) throw new Error('devices must be strings')
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens)) throw new Error('maxTokens must be an integer')
  return { devices, maxTokens }
}

const str: Validator<string> = (v) => {
  if (typeof v !== 'string') throw new Error('not a string')
  return v
}

describe('SettingsStore', () => {
  it('sets, gets, overwrites, lists and deletes validated values, which survive reopen', () => {
    const { settings } = f.store
    expect(settings.get('placement', placement)).toBeUndefined()
    settings.set('placement', { devices: ['webgpu', 'cpu'], maxTokens: 512 }, placement)
    settings.set('theme', 'dark', str)
    settings.set('theme', 'light 🌞', str)
    expect(settings.keys()).toEqual(['placement', 'theme'])

    const again = f.reopen().settings
    expect(again.get('placement', placement)).toEqual({ devices: ['webgpu', 'cpu'], maxTokens: 512 })
    expect(again.get('theme', str)).toBe('light 🌞')
    expect(again.delete('theme')).toBe(true)
    expect(again.delete('theme')).toBe(false)
    expect(again.get('theme', str)).toBeUndefined()
  })

  it('refuses values JSON cannot hold or the validator rejects, before writing', () => {
    const { settings } = f.store
    expect(() => settings.set('placement', { devices: ['cpu'], maxTokens: Number.NaN }, placement)).toThrow(TypeError)
    expect(() => settings.set('n', new Map<string, number>(), () => new Map<string, number>())).toThrow()
    // Valid JSON, but what would be read back does not pass the validator.
    expect(() => settings.set('placement', { devices: ['cpu'], maxTokens: 1.5 }, placement)).toThrow(/maxTokens/)
    expect(settings.keys()).toEqual([])
  })

  it('reports a stored value the validator rejects, or corrupt JSON, as StoreDataError; getOr falls back', () => {
    const { settings, db } = f.store
    settings.set('placement', 'an old format', str)
    expect(() => settings.get('placement', placement)).toThrow(StoreDataError)
    expect(() => settings.get('placement', placement)).toThrow('settings row "placement": stored value rejected: not a placement')
    const fallback: Placement = { devices: ['cpu'], maxTokens: 256 }
    expect(settings.getOr('placement', placement, fallback)).toBe(fallback)
    expect(settings.getOr('unset', placement, fallback)).toBe(fallback)

    db.pragma('ignore_check_constraints = ON')
    db.prepare("UPDATE settings SET value_json = '{oops' WHERE key = 'placement'").run()
    db.pragma('ignore_check_constraints = OFF')
    expect(() => settings.get('placement', placement)).toThrow(/value_json is not valid JSON/)
    expect(settings.getOr('placement', placement, fallback)).toBe(fallback)
  })

  it('passes validator errors on write through unchanged', () => {
    const boom: Validator<number> = () => {
      throw new RangeError('out of range')
    }
    expect(() => f.store.settings.set('x', 1, boom)).toThrow(RangeError)
  })
})
