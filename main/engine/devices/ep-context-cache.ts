/**
 * @file The compiled-model cache of provider-library devices (NPUs), through ONNX Runtime's EPContext
 * mechanism: NPU compilers take seconds to minutes per graph, so the first open of a cached graph on a device
 * asks the provider to write what it compiled (an EPContext model and the provider's own blobs) into a fresh
 * folder, which becomes the cache entry by one atomic rename once the session opened; later opens load that and
 * skip the compiler. An entry lives beside the graph cache and is keyed by the provider, the device, the
 * provider's version and library, the session's config, and the graph file — whose name is its content hash —
 * so another driver, option or graph never meets a stale blob. An entry that fails to load is removed and
 * compiled again; a provider that writes nothing is simply not cached.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { EpDeviceInfo } from './ort-c/runtime'

/** The cache's folder beside the graphs. */
export const EP_CONTEXT_DIR = 'ep-context'

/** The EPContext model's name inside an entry (the provider names its blobs relative to it). */
const CONTEXT_MODEL = 'model_ctx.onnx'

/** ONNX Runtime's session config keys for writing an EPContext model. */
const EP_CONTEXT_KEYS = { enable: 'ep.context_enable', filePath: 'ep.context_file_path', embedMode: 'ep.context_embed_mode' } as const

/** How an open went: loaded from the cache, compiled and written to it, or compiled without an entry. */
export type EpContextOutcome = 'hit' | 'written' | 'uncached'

/** What identifies an entry besides the graph file. */
export interface EpContextIdentity {
  readonly device: EpDeviceInfo
  /** the session's config entries and provider options (they can change what the provider compiles) */
  readonly configEntries: Readonly<Record<string, string>>
  readonly providerOptions: Readonly<Record<string, string>>
}

/** The entry folder for `graphPath` on this device and config. */
export function epContextEntry(graphPath: string, identity: EpContextIdentity): string {
  const { device, configEntries, providerOptions } = identity
  const sorted = (r: Readonly<Record<string, string>>): [string, string][] => Object.entries(r).sort(([a], [b]) => a.localeCompare(b))
  const size = statSync(graphPath).size
  const h = createHash('sha256')
  h.update(
    JSON.stringify({
      graph: basename(graphPath),
      size,
      ep: device.epName,
      epVendor: device.epVendor,
      hardware: [device.hardwareType, device.hardwareVendor, device.vendorId, device.deviceId],
      epMetadata: sorted(device.epMetadata),
      config: sorted(configEntries),
      providerOptions: sorted(providerOptions)
    })
  )
  return join(dirname(graphPath), EP_CONTEXT_DIR, `${basename(graphPath).replace(/\.onnx$/, '')}-${h.digest('hex').slice(0, 16)}`)
}

/**
 * Opens `graphPath` with `open`, through the entry for `identity`: the entry's EPContext model when there is one
 * (removed and compiled again if it does not load), else the graph with the provider asked to write an entry.
 * `open` gets the model path and the config entries to add.
 */
export function openThroughEpContext<S>(
  graphPath: string,
  identity: EpContextIdentity,
  open: (model: string, entries: Readonly<Record<string, string>>) => S
): { readonly session: S; readonly outcome: EpContextOutcome; readonly entry: string } {
  const entry = epContextEntry(graphPath, identity)
  const contextModel = join(entry, CONTEXT_MODEL)
  if (existsSync(contextModel)) {
    try {
      return { session: open(contextModel, {}), outcome: 'hit', entry }
    } catch {
      // a blob the provider no longer takes (or a damaged entry): compile again below
      rmSync(entry, { recursive: true, force: true })
    }
  }
  mkdirSync(dirname(entry), { recursive: true })
  const staging = mkdtempSync(`${entry}.tmp-`)
  const staged = join(staging, CONTEXT_MODEL)
  let session: S
  try {
    session = open(graphPath, { [EP_CONTEXT_KEYS.enable]: '1', [EP_CONTEXT_KEYS.filePath]: staged, [EP_CONTEXT_KEYS.embedMode]: '0' })
  } catch (e) {
    rmSync(staging, { recursive: true, force: true })
    // a provider that cannot write EPContext models still runs the graph: open it uncached, or throw its error
    try {
      return { session: open(graphPath, {}), outcome: 'uncached', entry }
    } catch {
      throw e
    }
  }
  if (!existsSync(staged)) {
    rmSync(staging, { recursive: true, force: true })
    return { session, outcome: 'uncached', entry }
  }
  try {
    renameSync(staging, entry)
  } catch {
    // another process wrote the same entry first: theirs is as good
    rmSync(staging, { recursive: true, force: true })
  }
  return { session, outcome: 'written', entry }
}
