/**
 * @file App settings over the store's key-value table: each key has a validator and a default, so a
 * missing, corrupt or out-of-range stored value reads as the default instead of breaking the app.
 */
import { resolve } from 'node:path'
import { API_LIMITS, type LocalApiPatch, type NpuQuantizationSetting, type PlacementSetting, type SamplingSettings, type Settings, type SettingsPatch, type ThemeSetting } from '../../preload/api'
import { DEFAULT_SHADOW_PRUNED_PERCENT } from '../engine'
import type { SettingsStore } from '../store'
import { apiKey, kvSnapshotBudget, localApiPatch, npuQuantization, path, providerName, providerOptions, samplingSettings, theme } from './api-validate'
import { invalid } from './errors'
import { DEFAULT_PLACEMENT_SETTING, placementSetting } from './placement-setting'

/** Sampling for new conversations until the user changes it. */
export const DEFAULT_SAMPLING_SETTINGS: SamplingSettings = Object.freeze({ temperature: 0.7, topP: 0.95, maxTokens: 256 })

/** Float matmuls until the user turns W8A8 on; then llm.npu's share of pruned shadows. */
export const DEFAULT_NPU_QUANTIZATION: NpuQuantizationSetting = Object.freeze({ w8a8: false, shadowPrunedPercent: DEFAULT_SHADOW_PRUNED_PERCENT })

/** Settings table keys. */
const KEYS = {
  modelFolders: 'modelFolders',
  modelFiles: 'modelFiles',
  defaultModelId: 'defaultModelId',
  theme: 'theme',
  sampling: 'sampling',
  placement: 'placement',
  providerLibraries: 'providerLibraries',
  npuQuantization: 'npuQuantization',
  kvSnapshotBudgetBytes: 'kvSnapshotBudgetBytes',
  localApi: 'localApi',
  localApiKey: 'localApiKey'
} as const

/** The local API is off until the user turns it on, on a fixed port (so tools can be set up once). */
export const DEFAULT_LOCAL_API: LocalApiPatch = Object.freeze({ enabled: false, port: 8391 })

/** KV snapshots may use 2 GiB until the user says otherwise. */
export const DEFAULT_KV_SNAPSHOT_BUDGET_BYTES = 2 * 1024 ** 3

/** A provider library as stored: registration name, file, and the options its sessions get. */
export interface StoredProviderLibrary {
  readonly name: string
  readonly path: string
  readonly options: Readonly<Record<string, string>>
}

function providerLibraryList(value: unknown): StoredProviderLibrary[] {
  if (!Array.isArray(value)) throw invalid('providerLibraries must be an array')
  if (value.length > API_LIMITS.maxProviderLibraries) throw invalid(`at most ${API_LIMITS.maxProviderLibraries} provider libraries`)
  return value.map((v: unknown, i) => {
    if (typeof v !== 'object' || v === null || !('name' in v) || !('path' in v)) throw invalid(`providerLibraries[${i}] must be { name, path }`)
    // libraries stored before options existed have none
    const options = 'options' in v && v.options !== undefined ? providerOptions(v.options, `providerLibraries[${i}].options`) : {}
    return { name: providerName(v.name, `providerLibraries[${i}].name`), path: path(v.path, `providerLibraries[${i}].path`), options }
  })
}

/** A stored list of paths: the validator of the `key` list of at most `max` `what`s. */
interface PathList {
  readonly key: (typeof KEYS)['modelFolders' | 'modelFiles']
  readonly max: number
  readonly what: string
}
const FOLDERS: PathList = { key: KEYS.modelFolders, max: API_LIMITS.maxModelFolders, what: 'model folders' }
const FILES: PathList = { key: KEYS.modelFiles, max: API_LIMITS.maxModelFiles, what: 'model files' }

function pathList(list: PathList): (value: unknown) => string[] {
  return (value) => {
    if (!Array.isArray(value)) throw invalid(`${list.key} must be an array`)
    if (value.length > list.max) throw invalid(`at most ${list.max} ${list.what}`)
    return value.map((v, i) => path(v, `${list.key}[${i}]`))
  }
}

function modelIdOrNull(value: unknown): string | null {
  return value === null ? null : path(value, 'defaultModelId')
}

/** Reads and writes Settings; synchronous (the store is). */
export class SettingsService {
  constructor(private readonly store: SettingsStore) {}

  /** The current settings, defaults filled in. */
  get(): Settings {
    return {
      modelFolders: this.modelFolders(),
      modelFiles: this.modelFiles(),
      defaultModelId: this.store.getOr(KEYS.defaultModelId, modelIdOrNull, null),
      theme: this.store.getOr<ThemeSetting>(KEYS.theme, (v) => theme(v), 'system'),
      sampling: this.sampling(),
      npuQuantization: this.npuQuantization(),
      kvSnapshotBudgetBytes: this.kvSnapshotBudgetBytes()
    }
  }

  /** Applies a validated patch and returns the new settings. */
  update(patch: SettingsPatch): Settings {
    if (patch.defaultModelId !== undefined) this.store.set(KEYS.defaultModelId, patch.defaultModelId, modelIdOrNull)
    if (patch.theme !== undefined) this.store.set(KEYS.theme, patch.theme, (v) => theme(v))
    if (patch.sampling !== undefined) this.store.set(KEYS.sampling, patch.sampling, (v) => samplingSettings(v))
    if (patch.npuQuantization !== undefined) this.store.set(KEYS.npuQuantization, patch.npuQuantization, (v) => npuQuantization(v))
    if (patch.kvSnapshotBudgetBytes !== undefined) this.store.set(KEYS.kvSnapshotBudgetBytes, patch.kvSnapshotBudgetBytes, (v) => kvSnapshotBudget(v))
    return this.get()
  }

  /** The local API's stored on/off and port. */
  localApi(): LocalApiPatch {
    return this.store.getOr(KEYS.localApi, (v) => localApiPatch(v), DEFAULT_LOCAL_API)
  }

  /** Stores the local API's on/off and port; `patch` must already be validated. */
  setLocalApi(patch: LocalApiPatch): void {
    this.store.set(KEYS.localApi, patch, (v) => localApiPatch(v))
  }

  /** The local API's key, or null before one was made. */
  localApiKey(): string | null {
    return this.store.getOr<string | null>(KEYS.localApiKey, (v) => apiKey(v), null)
  }

  /** Stores the local API's key. */
  setLocalApiKey(key: string): void {
    this.store.set(KEYS.localApiKey, key, (v) => apiKey(v))
  }

  /** Bytes the KV snapshots may use (default 2 GiB). */
  kvSnapshotBudgetBytes(): number {
    return this.store.getOr(KEYS.kvSnapshotBudgetBytes, (v) => kvSnapshotBudget(v), DEFAULT_KV_SNAPSHOT_BUDGET_BYTES)
  }

  /** How the layer matmuls run for integer NPUs (default: float, W8A8 off). */
  npuQuantization(): NpuQuantizationSetting {
    return this.store.getOr(KEYS.npuQuantization, (v) => npuQuantization(v), DEFAULT_NPU_QUANTIZATION)
  }

  /** Sampling defaults for new conversations. */
  sampling(): SamplingSettings {
    return this.store.getOr(KEYS.sampling, (v) => samplingSettings(v), DEFAULT_SAMPLING_SETTINGS)
  }

  /** Where the model runs: a preset or a custom placement (default: CPU only). A stored value this build cannot read is the default. */
  placement(): PlacementSetting {
    return this.store.getOr(KEYS.placement, (v) => placementSetting(v), DEFAULT_PLACEMENT_SETTING)
  }

  /** Stores a placement choice; `setting` must already be validated. */
  setPlacement(setting: PlacementSetting): void {
    this.store.set(KEYS.placement, setting, (v) => placementSetting(v))
  }

  /** Provider libraries the user added, in the order added (a stored list this build cannot read is empty). */
  providerLibraries(): StoredProviderLibrary[] {
    return this.store.getOr(KEYS.providerLibraries, providerLibraryList, [])
  }

  /** Stores the provider library list; its entries must already be validated. */
  setProviderLibraries(list: readonly StoredProviderLibrary[]): void {
    this.store.set(KEYS.providerLibraries, list, providerLibraryList)
  }

  /** Folders the user added, absolute, in the order added. */
  modelFolders(): string[] {
    return this.paths(FOLDERS)
  }

  /** Adds a folder (no-op if present); `folder` must already be validated and absolute. */
  addModelFolder(folder: string): void {
    this.addPath(FOLDERS, folder)
  }

  /** Removes a folder; returns whether it was in the list. */
  removeModelFolder(folder: string): boolean {
    return this.removePath(FOLDERS, folder)
  }

  /** Model files the user added one by one, absolute, in the order added. */
  modelFiles(): string[] {
    return this.paths(FILES)
  }

  /** Adds a model file (no-op if present); `file` must already be validated and absolute. */
  addModelFile(file: string): void {
    this.addPath(FILES, file)
  }

  /** Forgets a model file; returns whether it was in the list. */
  removeModelFile(file: string): boolean {
    return this.removePath(FILES, file)
  }

  private paths(list: PathList): string[] {
    return this.store.getOr(list.key, pathList(list), [])
  }

  private addPath(list: PathList, p: string): void {
    const paths = this.paths(list)
    const abs = resolve(p)
    if (paths.includes(abs)) return
    if (paths.length >= list.max) throw invalid(`At most ${list.max} ${list.what} can be added.`)
    this.store.set(list.key, [...paths, abs], pathList(list))
  }

  private removePath(list: PathList, p: string): boolean {
    const paths = this.paths(list)
    const abs = resolve(p)
    if (!paths.includes(abs)) return false
    this.store.set(
      list.key,
      paths.filter((f) => f !== abs),
      pathList(list)
    )
    return true
  }
}
