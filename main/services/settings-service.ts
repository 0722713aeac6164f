/**
 * @file App settings over the store's key-value table: each key has a validator and a default, so a
 * missing, corrupt or out-of-range stored value reads as the default instead of breaking the app.
 */
import { resolve } from 'node:path'
import { API_LIMITS, type NpuQuantizationSetting, type PlacementSetting, type SamplingSettings, type Settings, type SettingsPatch, type ThemeSetting } from '../../preload/api'
import { DEFAULT_SHADOW_PRUNED_PERCENT } from '../engine'
import type { SettingsStore } from '../store'
import { kvSnapshotBudget, npuQuantization, path, providerName, providerOptions, samplingSettings, theme } from './api-validate'
import { invalid } from './errors'
import { DEFAULT_PLACEMENT_SETTING, placementSetting } from './placement-setting'

/** Sampling for new conversations until the user changes it. */
export const DEFAULT_SAMPLING_SETTINGS: SamplingSettings = Object.freeze({ temperature: 0.7, topP: 0.95, maxTokens: 256 })

/** Float matmuls until the user turns W8A8 on; then llm.npu's share of pruned shadows. */
export const DEFAULT_NPU_QUANTIZATION: NpuQuantizationSetting = Object.freeze({ w8a8: false, shadowPrunedPercent: DEFAULT_SHADOW_PRUNED_PERCENT })

/** Settings table keys. */
const KEYS = {
  modelFolders: 'modelFolders',
  defaultModelId: 'defaultModelId',
  theme: 'theme',
  sampling: 'sampling',
  placement: 'placement',
  providerLibraries: 'providerLibraries',
  npuQuantization: 'npuQuantization',
  kvSnapshotBudgetBytes: 'kvSnapshotBudgetBytes'
} as const

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

function folderList(value: unknown): string[] {
  if (!Array.isArray(value)) throw invalid('modelFolders must be an array')
  if (value.length > API_LIMITS.maxModelFolders) throw invalid(`at most ${API_LIMITS.maxModelFolders} model folders`)
  return value.map((v, i) => path(v, `modelFolders[${i}]`))
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
    return this.store.getOr(KEYS.modelFolders, folderList, [])
  }

  /** Adds a folder (no-op if present); `folder` must already be validated and absolute. */
  addModelFolder(folder: string): void {
    const folders = this.modelFolders()
    const abs = resolve(folder)
    if (folders.includes(abs)) return
    if (folders.length >= API_LIMITS.maxModelFolders) throw invalid(`At most ${API_LIMITS.maxModelFolders} model folders can be added.`)
    this.store.set(KEYS.modelFolders, [...folders, abs], folderList)
  }

  /** Removes a folder; returns whether it was in the list. */
  removeModelFolder(folder: string): boolean {
    const folders = this.modelFolders()
    const abs = resolve(folder)
    if (!folders.includes(abs)) return false
    this.store.set(
      KEYS.modelFolders,
      folders.filter((f) => f !== abs),
      folderList
    )
    return true
  }
}
