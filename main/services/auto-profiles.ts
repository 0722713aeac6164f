/**
 * @file The measured device profiles Auto is solved from, per model: looked up in the SQLite cache (keyed by
 * the device set and the model's shape and weight encoding, which needs the weights: loaded once per model
 * per launch, then dropped), or measured by the engine's profiler (seconds) when Auto is about to run and
 * none is stored. A failed measurement is remembered with its reason, and Auto says so instead of solving.
 */
import { loadModel, parseProfile, profileCacheKeys, profileDevices, type DeviceInfo, type LoadedModel, type ModelConfig, type Profile, type ProfileCacheKeys } from '../engine'
import type { ModelEntry } from '../../preload/api'
import type { Store } from '../store'
import { errorMessage } from './errors'
import type { AutoProfile } from './placement-resolve'

/** What is known about one model's profile this launch. */
type Known =
  | { readonly state: 'measured'; readonly profile: Profile }
  | { readonly state: 'missing' }
  | { readonly state: 'failed'; readonly reason: string }

/** Profiles for Auto over the store's device_profiles cache. */
export class AutoProfiles {
  /** per model (id, size) and device set: cache keys (computing them reads the weights) and what is known */
  private readonly known = new Map<string, { readonly keys: ProfileCacheKeys; known: Known }>()

  constructor(
    private readonly store: Pick<Store, 'deviceProfiles'>,
    private readonly options: { readonly threads?: number } = {}
  ) {}

  /** The stored profile for `entry` on `devices`, without measuring. */
  async lookup(entry: ModelEntry, devices: readonly DeviceInfo[]): Promise<AutoProfile> {
    const slot = await this.slot(entry, devices)
    return this.outcome(slot.known)
  }

  /**
   * The profile for `entry` on `devices`, measuring it when none is stored (`beforeMeasuring` runs first:
   * the caller closes its open model, so no two threads hold WebGPU sessions while the profiler runs).
   * A failure is remembered for this launch and returned, not thrown.
   */
  async ensure(entry: ModelEntry, devices: readonly DeviceInfo[], beforeMeasuring: () => Promise<void>, signal?: AbortSignal): Promise<AutoProfile> {
    const slot = await this.slot(entry, devices)
    if (slot.known.state !== 'missing') return this.outcome(slot.known)
    await beforeMeasuring()
    try {
      const model = await this.loadWeights(entry)
      const profile = await profileDevices(model, devices, { threads: this.options.threads, signal })
      this.store.deviceProfiles.put(slot.keys.deviceKey, slot.keys.shapeKey, profile)
      slot.known = { state: 'measured', profile }
    } catch (err) {
      // an abort is the user stopping the reply, not a verdict on the devices: measure again next time
      if (signal?.aborted === true) throw err
      slot.known = { state: 'failed', reason: errorMessage(err) }
    }
    return this.outcome(slot.known)
  }

  private outcome(known: Known): AutoProfile {
    if (known.state === 'measured') return { profile: known.profile }
    return { profile: null, failure: known.state === 'failed' ? known.reason : null }
  }

  private async slot(entry: ModelEntry, devices: readonly DeviceInfo[]): Promise<{ readonly keys: ProfileCacheKeys; known: Known }> {
    const id = JSON.stringify([entry.id, entry.sizeBytes, devices.map((d) => [d.id, d.status])])
    let slot = this.known.get(id)
    if (slot === undefined) {
      const keys = profileCacheKeys(await this.loadWeights(entry), devices, { threads: this.options.threads })
      const stored = this.store.deviceProfiles.get(keys.deviceKey, keys.shapeKey, parseProfile)
      slot = { keys, known: stored === null ? { state: 'missing' } : { state: 'measured', profile: stored } }
      this.known.set(id, slot)
    }
    return slot
  }

  /** The model with its weights (what the profiler compiles and the cache key's weight encoding reads). */
  private async loadWeights(entry: ModelEntry): Promise<{ config: ModelConfig; weights: NonNullable<LoadedModel['weights']> }> {
    const m = await loadModel(entry.path)
    if (m.weights === null) throw new Error(`${entry.name}: the weights did not load`)
    return { config: m.config, weights: m.weights }
  }
}
