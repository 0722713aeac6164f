/**
 * @file `tandem generate --placement NAME|FILE.json`: turns the flag into a Placement for this model on this
 * machine's (probed) devices. NAME is a preset (plan/presets.ts; Auto measures the devices first, which
 * takes seconds, and says so); anything else is read as a placement JSON file (size-limited) and checked by
 * `parsePlacement`, whose errors name the field. Notes (a preset's fallback, Auto's explanation) go to
 * `log`, i.e. stderr: stdout stays the result only.
 */
import { open } from 'node:fs/promises'
import {
  buildPreset,
  discoverAllDevices,
  parsePlacement,
  PlacementError,
  PRESET_IDS,
  profileDevices,
  readWeights,
  weightInfoOfTypes,
  type DeviceInfo,
  type LoadedModel,
  type ModelConfig,
  type Placement,
  type PresetId,
  type WeightInfo
} from '../engine'
import { errorCode } from '../common/error-code'
import { providerOptions, type ProviderArgs } from './args'
import { reportFailedLibraries } from './devices'

/** Largest placement file read (bytes): a placement for a 1000-layer model with every override is far below. */
export const MAX_PLACEMENT_FILE_BYTES = 1 << 20

/** Options for resolveCliPlacement. */
export interface CliPlacementOptions {
  /** --prefill-chunk: the preset's chunk, or an override of the file's; undefined = the placement's own */
  readonly prefillChunkTokens?: number
  /** ORT threads for Auto's measurement (as the run will use) */
  readonly threads?: number
  /** one line of diagnostics (stderr) */
  readonly log: (line: string) => void
  /** provider libraries (--virtual-npu, --ep-library) whose devices the placement may use */
  readonly providers: ProviderArgs
}

/** A placement ready for the runner, and the devices it was validated against. */
export interface CliPlacement {
  readonly placement: Placement
  readonly devices: readonly DeviceInfo[]
  /** the preset id, or null for a file */
  readonly preset: PresetId | null
}

/** True when `arg` names a preset. */
export function isPresetId(arg: string): arg is PresetId {
  return PRESET_IDS.some((id) => id === arg)
}

/** Reads a placement file as JSON, at most MAX_PLACEMENT_FILE_BYTES; errors say which file and what is wrong. */
export async function readPlacementFile(path: string): Promise<unknown> {
  let handle
  try {
    handle = await open(path, 'r')
  } catch (e) {
    if (errorCode(e) === 'ENOENT') throw new Error(`placement file ${path} not found (and "${path}" is not a preset: ${PRESET_IDS.join(', ')})`)
    throw new Error(`cannot read placement file ${path}: ${e instanceof Error ? e.message : String(e)}`)
  }
  let text: string
  try {
    const { size } = await handle.stat()
    if (size > MAX_PLACEMENT_FILE_BYTES) throw new Error(`placement file ${path} is ${size} bytes; the limit is ${MAX_PLACEMENT_FILE_BYTES}`)
    // read one byte past the limit: a file that grew after stat is still refused
    const buffer = Buffer.alloc(MAX_PLACEMENT_FILE_BYTES + 1)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    if (bytesRead > MAX_PLACEMENT_FILE_BYTES) throw new Error(`placement file ${path} is larger than ${MAX_PLACEMENT_FILE_BYTES} bytes`)
    text = buffer.subarray(0, bytesRead).toString('utf8')
  } finally {
    await handle.close()
  }
  try {
    const json: unknown = JSON.parse(text)
    return json
  } catch (e) {
    throw new Error(`placement file ${path} is not valid JSON: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** parsePlacement with the file named in the error (PlacementError names the field). */
function parseFile(path: string, json: unknown, config: ModelConfig, devices: readonly DeviceInfo[], weights: WeightInfo): Placement {
  try {
    return parsePlacement(json, config, devices, weights)
  } catch (e) {
    if (e instanceof PlacementError) throw new Error(`placement file ${path} is invalid: ${e.path === '' ? '' : `${e.path}: `}${e.detail}`)
    throw e
  }
}

/** A preset for this model on these devices; Auto measures the devices first (the only reason to read the weights here). */
async function presetPlacement(id: PresetId, model: LoadedModel, devices: readonly DeviceInfo[], options: CliPlacementOptions): Promise<Placement> {
  let profile
  if (id === 'auto') {
    const ready = devices.filter((d) => d.status === 'ready').map((d) => d.id)
    options.log(`auto: measuring ${ready.join(', ')} for this model…`)
    const t0 = performance.now()
    profile = await profileDevices({ config: model.config, weights: readWeights(model.layout) }, devices, { prefillChunkTokens: options.prefillChunkTokens, threads: options.threads })
    options.log(`auto: measured the devices in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
  }
  const { placement, note } = buildPreset(id, model.config, devices, { weights: weightInfoOfTypes(model.tensorTypes), prefillChunkTokens: options.prefillChunkTokens, profile })
  if (note !== null) options.log(note)
  return placement
}

/**
 * Resolves `--placement arg` for a model (its parsed header): probes the devices and returns the placement.
 * The contract checks need only the header's tensor encodings; only Auto reads the weights (its profiler
 * compiles them). Throws an Error whose message is ready for the user.
 */
export async function resolveCliPlacement(arg: string, model: LoadedModel, options: CliPlacementOptions): Promise<CliPlacement> {
  const preset = isPresetId(arg) ? arg : null
  // a bad file fails before the seconds of device probing
  const fileJson = preset === null ? await readPlacementFile(arg) : null
  const t0 = performance.now()
  const { devices, libraries } = await discoverAllDevices(providerOptions(options.providers), { log: options.log })
  reportFailedLibraries(libraries, options.log)
  const usable = devices.filter((d) => d.status === 'ready').map((d) => d.id)
  options.log(`devices: ${usable.join(', ')} ready (probed in ${((performance.now() - t0) / 1000).toFixed(1)} s)`)
  if (preset !== null) return { placement: await presetPlacement(preset, model, devices, options), devices, preset }
  const weights = weightInfoOfTypes(model.tensorTypes)
  const placement =
    options.prefillChunkTokens === undefined || fileJson === null || typeof fileJson !== 'object' || Array.isArray(fileJson)
      ? parseFile(arg, fileJson, model.config, devices, weights)
      : parseFile(arg, { ...fileJson, prefillChunkTokens: options.prefillChunkTokens }, model.config, devices, weights)
  return { placement, devices, preset }
}
