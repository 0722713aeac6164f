/**
 * @file Devices and placement for the app: the device list (probed once per launch: probing starts child
 * processes, so the promise is cached), the placement choice persisted in settings, what it resolves to for
 * the default model (PlacementView), and for chat the placement a model is opened with. CPU only — the
 * default — needs no probing (the engine runs it as one session: chooseEngine).
 */
import { existsSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { API_LIMITS, type DeviceView, type ModelEntry, type PlacementSetting, type PlacementView, type ProviderLibraryView } from '../../preload/api'
import {
  defaultPrefillChunkTokens,
  discoverAllDevices,
  discoverDevices,
  discoverEpDevices,
  maxPrefillChunkTokens,
  parsePlacement,
  weightInfoOfTypes,
  type ModelConfig,
  DEFAULT_PREFILL_CHUNK_TOKENS,
  MATMUL_GROUPS,
  MAX_PREFILL_CHUNK_TOKENS,
  OP_GROUP_NAMES,
  STATIC_CHUNK_TOKENS,
  staticChunkRange,
  type DeviceInfo,
  type Placement,
  type ProviderLibraryStatus,
  type ProviderOptions,
  type W8A8Request
} from '../engine'
import type { AutoProfiles } from './auto-profiles'
import { ApiError, errorMessage, invalid } from './errors'
import type { ModelHeader, ModelsService } from './models-service'
import { resolvePlacement, NOT_PROFILED, type AutoProfile, type PlacementModel, type Resolution } from './placement-resolve'
import type { SettingsService } from './settings-service'

/** The chunk limits the placement editor shows: the model's when there is one, the engine's otherwise. */
function prefillChunkView(config: ModelConfig | null): PlacementView['prefillChunk'] {
  if (config === null) {
    const { min, max, default: defaultTokens } = STATIC_CHUNK_TOKENS
    return { defaultTokens: DEFAULT_PREFILL_CHUNK_TOKENS, maxTokens: MAX_PREFILL_CHUNK_TOKENS, staticShapes: { minTokens: min, maxTokens: max, defaultTokens } }
  }
  const s = staticChunkRange(config)
  return { defaultTokens: defaultPrefillChunkTokens(config), maxTokens: maxPrefillChunkTokens(config), staticShapes: { minTokens: s.min, maxTokens: s.max, defaultTokens: s.defaultTokens } }
}

/** What DevicesService needs. */
export interface DevicesServiceDeps {
  readonly settings: SettingsService
  readonly models: ModelsService
  /** measured profiles for Auto (without it, Auto never measures and says so) */
  readonly profiles?: AutoProfiles
  /** provider libraries (and the virtual NPU) to register and list with the probed devices */
  readonly providers?: ProviderOptions
}

/** How chat opens a model: the placement it runs (always one; the engine chooses how) and the devices it may use. */
export interface ModelPlacement {
  /** equal keys mean the same placement: an open model is reused only while its key still matches */
  readonly key: string
  readonly placement: Placement
  readonly devices: readonly DeviceInfo[]
  /** W8A8 with shadow segments (Settings → Devices → Integer NPUs), or undefined for float matmuls */
  readonly w8a8?: W8A8Request
}

/** What placementFor may do before measuring the devices for Auto. */
export interface PlacementForOptions {
  /** runs before the profiler starts (chat closes its open model: no two threads may hold WebGPU sessions) */
  readonly beforeMeasuring?: () => Promise<void>
  /** aborts a measurement in progress */
  readonly signal?: AbortSignal
}

/** A device as the settings panel shows it. */
function toView(d: DeviceInfo): DeviceView {
  return { id: d.id, name: d.name, kind: d.kind, ep: d.ep, software: d.software, status: d.status, reason: d.reason }
}

/** Devices, the placement choice, and what it resolves to. */
export class DevicesService {
  /** probed discovery (child processes; seconds), started on first need */
  private probed: Promise<DeviceInfo[]> | null = null
  /** how the provider libraries' registration went in the last discovery */
  private libraries: readonly ProviderLibraryStatus[] = []
  /** discovery without probing (no child processes): enough for the CPU-only placement and device names */
  private quick: Promise<DeviceInfo[]> | null = null
  /** the best list known so far, for synchronous name lookups */
  private known: readonly DeviceInfo[] = []
  private lastView: { readonly key: string; readonly view: PlacementView } | null = null

  constructor(private readonly deps: DevicesServiceDeps) {}

  /** Every device found, ready or not. */
  async list(): Promise<DeviceView[]> {
    return (await this.devices()).map(toView)
  }

  /** The probed devices (discovery runs once per service; a failed run is retried on the next call). */
  devices(): Promise<readonly DeviceInfo[]> {
    if (this.probed === null) {
      const settingsLibraries = this.deps.settings.providerLibraries()
      const providers: ProviderOptions = {
        virtualNpu: this.deps.providers?.virtualNpu,
        providerLibraries: [...(this.deps.providers?.providerLibraries ?? []), ...settingsLibraries]
      }
      const run = discoverAllDevices(providers).then((r) => {
        this.libraries = r.libraries
        return r.devices
      })
      this.probed = run
      run.then(
        (list) => {
          this.known = list
        },
        () => {
          // not cached: the next call probes again
          if (this.probed === run) this.probed = null
        }
      )
    }
    return this.probed
  }

  /** The provider libraries added in settings, with how their registration went in the last discovery. */
  async providerLibraries(): Promise<ProviderLibraryView[]> {
    await this.devices()
    return this.deps.settings.providerLibraries().map((lib) => {
      const status = this.libraries.find((l) => l.name === lib.name && l.path === lib.path)
      return {
        name: lib.name,
        path: lib.path,
        options: lib.options,
        status: status?.ok === true ? 'registered' : 'failed',
        reason: status === undefined ? 'not registered yet' : status.reason,
        eps: status?.eps ?? []
      }
    })
  }

  /**
   * Registers a provider library now and, when it loads, keeps it for later starts; the device list is probed
   * again to show its devices. A library that does not load is refused with ONNX Runtime's reason.
   */
  async addProviderLibrary(name: string, path: string, options: Readonly<Record<string, string>>): Promise<ProviderLibraryView[]> {
    const stored = this.deps.settings.providerLibraries()
    if (stored.some((l) => l.name === name)) throw invalid(`a provider library named "${name}" is already added`)
    if (stored.length >= API_LIMITS.maxProviderLibraries) throw invalid(`at most ${API_LIMITS.maxProviderLibraries} provider libraries`)
    if (!isAbsolute(path)) throw invalid('the provider library path must be absolute')
    if (!existsSync(path)) throw invalid(`no file at ${path}`)
    const { libraries } = await discoverEpDevices({ providerLibraries: [{ name, path }], probe: false })
    const outcome = libraries.find((l) => l.name === name)
    if (outcome === undefined || !outcome.ok) throw invalid(`could not load ${path}: ${outcome?.reason ?? 'unknown error'}`)
    this.deps.settings.setProviderLibraries([...stored, { name, path, options }])
    // the next list probes again, with the new library's devices
    this.probed = null
    this.lastView = null
    return this.providerLibraries()
  }

  /** Forgets a provider library (its devices stay registered until Tandem restarts: open sessions may use them). */
  async removeProviderLibrary(name: string): Promise<ProviderLibraryView[]> {
    const stored = this.deps.settings.providerLibraries()
    if (!stored.some((l) => l.name === name)) throw invalid(`no provider library named "${name}"`)
    this.deps.settings.setProviderLibraries(stored.filter((l) => l.name !== name))
    return this.providerLibraries()
  }

  /** Ready device ids known so far, in list order (the live view's series). */
  readyDeviceIds(): string[] {
    return this.known.filter((d) => d.status === 'ready').map((d) => d.id)
  }

  /** A device's display name (its id when it is not known yet). */
  deviceName(id: string): string {
    return this.known.find((d) => d.id === id)?.name ?? id
  }

  /** The choice and what it resolves to for the default model. */
  async placement(): Promise<PlacementView> {
    const setting = this.deps.settings.placement()
    const [model, devices] = await Promise.all([this.defaultModel(), this.devices()])
    const auto = model !== null && setting.preset === 'auto' ? await this.autoLookup(model.header.entry, devices) : NOT_PROFILED
    // resolving can run the solver; the same inputs give the same view
    const key = JSON.stringify([setting, model?.header.entry.id ?? null, model?.header.entry.sizeBytes ?? null, devices.length, auto.profile !== null, 'failure' in auto ? auto.failure : null])
    if (this.lastView?.key === key) return this.lastView.view
    const resolution: Resolution =
      model === null
        ? { placement: null, explanation: 'No model is available yet, so there is nothing to place; add a models folder in Settings.', predicted: null }
        : resolvePlacement(setting, model.placement, devices, auto)
    const view: PlacementView = {
      setting,
      resolved: resolution.placement,
      explanation: resolution.explanation,
      predicted: resolution.predicted,
      opGroups: [...OP_GROUP_NAMES],
      matmulGroups: [...MATMUL_GROUPS],
      prefillChunk: prefillChunkView(model?.header.config ?? null)
    }
    this.lastView = { key, view }
    return view
  }

  /**
   * Stores a new choice (it applies to the next generation). A custom placement is checked against the
   * default model and the devices when a model is available (else its structure was checked by the API);
   * one that cannot run is a ValidationError naming the field, and nothing is stored.
   */
  async setPlacement(setting: PlacementSetting): Promise<PlacementView> {
    let toStore = setting
    if (setting.preset === 'custom') {
      const model = await this.defaultModel()
      if (model !== null) {
        const devices = await this.devices()
        try {
          toStore = { preset: 'custom', placement: parsePlacement(setting.placement, model.placement.config, devices, model.placement.weights) }
        } catch (err) {
          throw invalid(`This placement cannot run ${model.placement.name} on this machine: ${errorMessage(err)}`)
        }
      }
    }
    this.deps.settings.setPlacement(toStore)
    return this.placement()
  }

  /**
   * The placement to open `entry` with under the current choice. CPU only needs no probing; Auto measures
   * the devices first when they were never measured for this model; a choice that cannot run this model is
   * a PlacementError.
   */
  async placementFor(entry: ModelEntry, options: PlacementForOptions = {}): Promise<ModelPlacement> {
    const setting = this.deps.settings.placement()
    const header = this.deps.models.header(entry)
    if (header === null) throw new ApiError('ModelError', `The model ${entry.name} cannot be read.`)
    const model = placementModel(header)
    const devices = setting.preset === 'cpu' ? await this.quickDevices() : await this.devices()
    let auto: AutoProfile = NOT_PROFILED
    if (setting.preset === 'auto' && this.deps.profiles !== undefined) {
      auto = await this.deps.profiles.ensure(entry, devices, options.beforeMeasuring ?? (async () => undefined), options.signal)
    }
    const r = resolvePlacement(setting, model, devices, auto)
    if (r.placement === null) throw new ApiError('PlacementError', `${r.explanation ?? 'The placement cannot run here.'} Choose another placement in Settings → Devices.`)
    const q = this.deps.settings.npuQuantization()
    const w8a8 = q.w8a8 ? { shadowPrunedPercent: q.shadowPrunedPercent } : undefined
    return { key: JSON.stringify({ placement: r.placement, w8a8 }), placement: r.placement, devices, w8a8 }
  }

  /** Waits for a discovery in flight (its probe child processes) so nothing outlives the app. */
  async dispose(): Promise<void> {
    await Promise.allSettled([this.probed, this.quick])
  }

  /** Devices without probing: the CPU (always ready) and what the build lists; cached. */
  private quickDevices(): Promise<readonly DeviceInfo[]> {
    this.quick ??= discoverDevices({ probe: false }).then((list) => {
      if (this.known.length === 0) this.known = list
      return list
    })
    return this.quick
  }

  /** The default model's header facts, or null when no model is usable. */
  private async defaultModel(): Promise<{ header: ModelHeader; placement: PlacementModel } | null> {
    let entry: ModelEntry
    try {
      entry = await this.deps.models.pick(null)
    } catch (err) {
      if (err instanceof ApiError && (err.name === 'NoModelError' || err.name === 'ModelError')) return null
      throw err
    }
    const header = this.deps.models.header(entry)
    return header === null ? null : { header, placement: placementModel(header) }
  }

  /** Auto's stored profile for `entry`, without measuring (reading the weights once per model for the cache key). */
  private async autoLookup(entry: ModelEntry, devices: readonly DeviceInfo[]): Promise<AutoProfile> {
    if (this.deps.profiles === undefined) return NOT_PROFILED
    try {
      return await this.deps.profiles.lookup(entry, devices)
    } catch (err) {
      return { profile: null, failure: errorMessage(err) }
    }
  }
}

/** The placement facts of a model header. */
function placementModel(h: ModelHeader): PlacementModel {
  return { name: h.entry.name, config: h.config, weights: weightInfoOfTypes(h.tensorTypes) }
}
