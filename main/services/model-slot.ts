/**
 * @file The one model kept open for chat. Opening compiles (or loads from cache) its graphs and starts its
 * workers; switching to another model — or to another placement of the same model — disposes the previous
 * one first, so only one set of weights is in memory. Callers serialize their use (the chat queue), so
 * there is no locking here.
 *
 * The graph cache folder is checked before each open: when it cannot be written (read-only, a file in the
 * way, no permission), compiled graphs go to a temporary folder of this process instead — removed by
 * dispose(), so each start compiles again — and the slot says so (stderr and cacheNotice) rather than failing
 * every chat with "could not open the model".
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { checkGraphCacheWritable, TextModel, type LoadProgress } from '../engine'
import type { ModelEntry } from '../../preload/api'
import type { ModelPlacement } from './devices-service'
import { ApiError, errorMessage, isDiskFull } from './errors'

/** Options every model is opened with. */
export interface ModelSlotOptions {
  /** compiled-graph cache folder */
  readonly cacheDir: string
  /** ONNX Runtime intra-op threads (default: the physical cores, devices/cpu-cores.ts) */
  readonly threads?: number
}

/** Holds at most one open TextModel. */
export class ModelSlot {
  private current: { readonly id: string; readonly fileKey: string; readonly placementKey: string; readonly model: TextModel } | null = null
  /** this process's stand-in for an unwritable graph cache, made on first need */
  private fallbackDir: string | null = null
  private notice: string | null = null
  /** open models whose cached graph turned out not to match their file (see acquire) */
  private readonly stale = new WeakSet<TextModel>()

  constructor(private readonly options: ModelSlotOptions) {}

  /**
   * The open model for `entry` under `placed`, opening it (and closing any other) when the model, its files
   * (replaced at the same path: another size or mtime) or the placement differ. `onProgress` hears what an
   * open is doing (nothing when the model is already open).
   */
  async acquire(entry: ModelEntry, placed: ModelPlacement, onProgress?: (p: LoadProgress) => void): Promise<TextModel> {
    const fileKey = `${entry.sizeBytes}:${entry.modifiedMs}`
    const open = this.current
    const same = open !== null && open.id === entry.id && open.fileKey === fileKey && open.placementKey === placed.key
    if (same && !this.stale.has(open.model)) return open.model
    await this.release()
    const cacheDir = await this.usableCacheDir()
    try {
      const model = await TextModel.open(entry.path, {
        cacheDir,
        threads: this.options.threads,
        placement: placed.placement,
        devices: placed.devices,
        w8a8: placed.w8a8,
        onProgress
      })
      this.current = { id: entry.id, fileKey, placementKey: placed.key, model }
      // a cached graph whose full check fails (the file changed in a way its sampled key missed) was removed
      // from the cache: the next acquire opens the model again, which compiles it from the bytes as they are
      void model.worker.verification.then((result) => {
        if (result !== 'stale') return
        this.stale.add(model)
        process.stderr.write(`tandem: ${entry.name} changed since it was compiled; it is compiled again for the next reply\n`)
      })
      return model
    } catch (err) {
      if (isDiskFull(err)) {
        throw new ApiError('DiskFullError', `The disk is full: could not store the compiled model ${entry.name} in ${cacheDir} (${errorMessage(err)}).`, { cause: err })
      }
      throw new ApiError('ModelError', `Could not open the model ${entry.name}: ${errorMessage(err)}`, { cause: err })
    }
  }

  /** Id of the open model, or null. */
  get openModelId(): string | null {
    return this.current?.id ?? null
  }

  /** The open model, or null. */
  get openModel(): TextModel | null {
    return this.current?.model ?? null
  }

  /** Why the configured graph cache is not in use and what is used instead; null while it works. */
  get cacheNotice(): string | null {
    return this.notice
  }

  /** Closes the open model, and removes the temporary graph cache if one was needed. */
  async dispose(): Promise<void> {
    await this.release()
    if (this.fallbackDir !== null) await rm(this.fallbackDir, { recursive: true, force: true })
    this.fallbackDir = null
  }

  /** The configured cache folder when it can be written, else this process's temporary one (said once on stderr). */
  private async usableCacheDir(): Promise<string> {
    const configured = this.options.cacheDir
    try {
      await checkGraphCacheWritable(configured)
      this.notice = null
      return configured
    } catch (err) {
      let fallback: string
      try {
        this.fallbackDir ??= await mkdtemp(join(tmpdir(), 'tandem-graphs-'))
        fallback = this.fallbackDir
      } catch (tmpErr) {
        const reason = `Compiled models cannot be stored: neither ${configured} (${errorMessage(err)}) nor a temporary folder (${errorMessage(tmpErr)}) can be written.`
        throw new ApiError(isDiskFull(err) && isDiskFull(tmpErr) ? 'DiskFullError' : 'ModelError', reason, { cause: err })
      }
      const notice = `The graph cache folder ${configured} cannot be written (${errorMessage(err)}); compiled models are kept in ${fallback} until Tandem quits, so they are compiled again after a restart.`
      if (notice !== this.notice) process.stderr.write(`tandem: ${notice}\n`)
      this.notice = notice
      return fallback
    }
  }

  /** Closes the open model (its worker and session). */
  async release(): Promise<void> {
    const open = this.current
    this.current = null
    if (open !== null) await open.model.dispose()
  }
}
