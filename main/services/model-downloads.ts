/**
 * @file The catalog in Settings → Models: the curated models (resources/model-catalog.json, read once) with their
 * state on this computer, and their downloads into Tandem's own models folder (downloads/: checked, resumable,
 * placed atomically). A download belongs to the app, not to the window that asked: a second caller joins it, a
 * caller that goes away only stops listening, and it ends when it completes, fails, is paused (aborted; its bytes
 * stay on disk and the next download resumes from them) or the app shuts down. State is read from the disk
 * (the placed model, the `.part` file or the staging folder), so a download cut by a crash shows as paused.
 */
import { readdir, rm, stat } from 'node:fs/promises'
import { totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import type { CatalogModelView, CatalogState, DownloadEvent, ModelCatalog, ModelEntry } from '../../preload/api'
import { catalogDestination, downloadCatalogModel, DownloadError, HUGGING_FACE_HUB, partPath, readCatalog, stagingDir, type CatalogModel } from './downloads'
import { ApiError, errorMessage } from './errors'
import type { ModelsService } from './models-service'

/** Progress events go out at most this often per download (a chunk arrives every 64 KiB: thousands a second). */
export const PROGRESS_INTERVAL_MS = 200

/** The shipped catalog: resources/ two folders up, from the sources (main/services) and from the build (out/main) alike. */
export const SHIPPED_CATALOG_FILE = resolve(import.meta.dirname, '..', '..', 'resources', 'model-catalog.json')

/** Where the hub and the catalog are: the options, else TANDEM_HUB_URL and TANDEM_MODEL_CATALOG, else Hugging Face and the shipped catalog. */
export function downloadSources(
  env: NodeJS.ProcessEnv,
  options: { readonly hubUrl?: string; readonly modelCatalogFile?: string }
): { readonly hub: string; readonly catalogFile: string } {
  const fromEnv = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value.trim())
  return {
    hub: (options.hubUrl ?? fromEnv(env.TANDEM_HUB_URL) ?? HUGGING_FACE_HUB).replace(/\/+$/, ''),
    catalogFile: resolve(options.modelCatalogFile ?? fromEnv(env.TANDEM_MODEL_CATALOG) ?? SHIPPED_CATALOG_FILE)
  }
}

/** What the downloads need; all but `models`, `modelsDir` and `catalogFile` default to the real thing. */
export interface ModelDownloadsOptions {
  readonly models: ModelsService
  /** Tandem's own models folder */
  readonly modelsDir: string
  readonly catalogFile: string
  /** default https://huggingface.co */
  readonly hub?: string
  readonly fetch?: typeof fetch
  /** free bytes on a folder's disk (default statfs) */
  readonly freeBytes?: (dir: string) => Promise<number>
  /** this computer's memory (default os.totalmem) */
  readonly totalMemoryBytes?: () => number
}

/** A download in progress. */
interface RunState {
  readonly controller: AbortController
  readonly listeners: Set<(event: DownloadEvent) => void>
  progress: { receivedBytes: number; totalBytes: number }
  /** why it was aborted */
  stop: 'pause' | 'shutdown' | null
}

/** A download in progress and how it ends. */
interface Running extends RunState {
  readonly done: Promise<ModelEntry>
}

/** Sends a download's progress to everyone following it. */
function announce(run: RunState): void {
  for (const listener of run.listeners) listener({ type: 'progress', ...run.progress })
}

/** Calls `send` at most every `intervalMs` with the latest value, the last one always (trailing). */
function throttle<T>(send: (value: T) => void, intervalMs: number): { push(value: T): void; flush(): void } {
  let lastMs = -Infinity
  let pending: { value: T } | null = null
  let timer: ReturnType<typeof setTimeout> | null = null
  const flush = (): void => {
    if (timer !== null) clearTimeout(timer)
    timer = null
    if (pending === null) return
    const { value } = pending
    pending = null
    lastMs = performance.now()
    send(value)
  }
  return {
    push(value) {
      pending = { value }
      const waitMs = lastMs + intervalMs - performance.now()
      if (waitMs <= 0) flush()
      else timer ??= setTimeout(flush, waitMs)
    },
    flush
  }
}

/** The catalog and its downloads; dispose() pauses what is running. */
export class ModelDownloads {
  private models: Promise<CatalogModel[]> | null = null
  private readonly running = new Map<string, Running>()
  /** why a model's last download failed, until the next one starts */
  private readonly errors = new Map<string, string>()
  /** totals the hub gave this run (the catalog's are approximate) */
  private readonly totals = new Map<string, number>()

  constructor(private readonly options: ModelDownloadsOptions) {}

  /** The catalog's models, each with its state here, and this computer's memory. */
  async catalog(): Promise<ModelCatalog> {
    const models = await this.catalogModels()
    return { models: await Promise.all(models.map((m) => this.view(m))), totalMemoryBytes: (this.options.totalMemoryBytes ?? totalmem)() }
  }

  /**
   * Downloads a catalog model (or joins its running download), sending progress to `emit`; resolves with its
   * entry once it is placed and listed. Rejects with StoppedError when paused, ShutdownError when the app quits,
   * DownloadError when it failed (the message says why and what to do). `signal`: the caller went away; the
   * download goes on.
   */
  async download(catalogId: string, emit: (event: DownloadEvent) => void, signal: AbortSignal): Promise<ModelEntry> {
    const model = await this.model(catalogId)
    const dest = catalogDestination(model, this.options.modelsDir)
    if (!this.running.has(model.id)) {
      const installed = await this.installed(dest)
      if (installed !== null) return installed
    }
    // looked up again after the await: another caller may have started it meanwhile
    const run = this.running.get(model.id) ?? this.start(model)
    const events = throttle(emit, PROGRESS_INTERVAL_MS)
    const listener = (event: DownloadEvent): void => events.push(event)
    run.listeners.add(listener)
    // a joined download's progress at once (a new one reports what a paused one kept as soon as it has looked)
    if (run.progress.receivedBytes > 0) listener({ type: 'progress', ...run.progress })
    const gone = new Promise<never>((_resolve, reject) => {
      const onAbort = (): void => reject(new ApiError('StoppedError', `${model.name} goes on downloading; Settings → Models shows its progress.`))
      if (signal.aborted) onAbort()
      else signal.addEventListener('abort', onAbort, { once: true })
    })
    try {
      return await Promise.race([run.done, gone])
    } finally {
      run.listeners.delete(listener)
      events.flush()
    }
  }

  /** Pauses a running download and resolves with the model's state once it stopped (its bytes are kept). */
  async pause(catalogId: string): Promise<CatalogModelView> {
    const model = await this.model(catalogId)
    const run = this.running.get(model.id)
    if (run !== undefined) {
      run.stop ??= 'pause'
      run.controller.abort()
      await run.done.catch(() => undefined)
    }
    return this.view(model)
  }

  /**
   * Stops a running or paused download and deletes the bytes it kept (the `.part` file, or a folder model's staging
   * folder); the model is then available to download from the start. An installed model is not touched.
   */
  async cancel(catalogId: string): Promise<CatalogModelView> {
    const model = await this.model(catalogId)
    await this.pause(catalogId)
    const { modelsDir } = this.options
    await rm(model.format === 'gguf' ? partPath(catalogDestination(model, modelsDir)) : stagingDir(model, modelsDir), { recursive: true, force: true })
    this.errors.delete(model.id)
    this.totals.delete(model.id)
    return this.view(model)
  }

  /** Stops every download (their bytes are kept: they resume at the next start). */
  async dispose(): Promise<void> {
    const runs = [...this.running.values()]
    for (const run of runs) {
      run.stop = 'shutdown'
      run.controller.abort()
    }
    await Promise.all(runs.map((r) => r.done.catch(() => undefined)))
  }

  /** The catalog, read on first use (a malformed one is a DownloadError saying which field). */
  private catalogModels(): Promise<CatalogModel[]> {
    const reading = this.models ?? readCatalog(this.options.catalogFile).catch((err: unknown) => {
      this.models = null
      if (err instanceof DownloadError) throw err
      throw new DownloadError(`The model catalog ${this.options.catalogFile} could not be read (${errorMessage(err)}).`, { cause: err })
    })
    this.models = reading
    return reading
  }

  private async model(catalogId: string): Promise<CatalogModel> {
    const model = (await this.catalogModels()).find((m) => m.id === catalogId)
    if (model === undefined) throw new ApiError('NotFoundError', `The catalog has no model "${catalogId}".`)
    return model
  }

  /** The listed entry of a model already placed at `dest`, or null. */
  private async installed(dest: string): Promise<ModelEntry | null> {
    if (!(await exists(dest))) return null
    return (await this.options.models.list()).find((m) => m.id === dest) ?? null
  }

  private start(model: CatalogModel): Running {
    const state: RunState = {
      controller: new AbortController(),
      listeners: new Set(),
      progress: { receivedBytes: 0, totalBytes: this.totals.get(model.id) ?? model.approxBytes },
      stop: null
    }
    this.errors.delete(model.id)
    const run = Object.assign(state, { done: this.run(model, state).finally(() => this.running.delete(model.id)) })
    this.running.set(model.id, run)
    // nobody may be listening when it ends (the window went away): its outcome is kept in `errors`, never thrown
    run.done.catch(() => undefined)
    return run
  }

  private async run(model: CatalogModel, run: RunState): Promise<ModelEntry> {
    const { options } = this
    let dest: string
    try {
      // what a paused download kept shows at once (the hub is asked for the sizes before the first new byte)
      run.progress = { ...run.progress, receivedBytes: await this.keptBytes(model) }
      announce(run)
      dest = await downloadCatalogModel(model, options.modelsDir, {
        hub: options.hub ?? HUGGING_FACE_HUB,
        signal: run.controller.signal,
        fetch: options.fetch,
        freeBytes: options.freeBytes,
        onModelProgress: (p) => {
          this.totals.set(model.id, p.total)
          run.progress = { receivedBytes: p.received, totalBytes: p.total }
          announce(run)
        }
      })
    } catch (err) {
      if (run.stop === 'shutdown') throw new ApiError('ShutdownError', `Tandem is quitting: the download of ${model.name} resumes next time.`)
      if (run.stop === 'pause') throw new ApiError('StoppedError', `The download of ${model.name} is paused; what it got is kept.`)
      this.errors.set(model.id, errorMessage(err))
      throw err
    }
    const entry = (await options.models.list()).find((m) => m.id === dest)
    if (entry === undefined) throw new DownloadError(`${model.name} was downloaded to ${dest}, but the model list does not show it.`)
    return entry
  }

  private async view(model: CatalogModel): Promise<CatalogModelView> {
    const { repo, name, format, parameters, quantization, memoryBytes, license } = model
    return { id: model.id, name, repo, format, parameters, quantization, sizeBytes: model.approxBytes, memoryBytes, license, state: await this.state(model), error: this.errors.get(model.id) ?? null }
  }

  private async state(model: CatalogModel): Promise<CatalogState> {
    const run = this.running.get(model.id)
    if (run !== undefined) return { kind: 'downloading', ...run.progress }
    const dest = catalogDestination(model, this.options.modelsDir)
    if (await exists(dest)) return { kind: 'installed', modelId: dest }
    const kept = await this.keptBytes(model)
    return kept > 0 ? { kind: 'paused', receivedBytes: kept, totalBytes: this.totals.get(model.id) ?? model.approxBytes } : { kind: 'available' }
  }

  /** Bytes a stopped download left on disk: the `.part` of a GGUF file, or everything in a folder model's staging folder. */
  private async keptBytes(model: CatalogModel): Promise<number> {
    const { modelsDir } = this.options
    if (model.format === 'gguf') return sizeOf(partPath(catalogDestination(model, modelsDir)))
    const staging = stagingDir(model, modelsDir)
    let names: string[]
    try {
      names = await readdir(staging, { recursive: true })
    } catch {
      return 0
    }
    const sizes = await Promise.all(names.map((n) => sizeOf(join(staging, n))))
    return sizes.reduce((a, b) => a + b, 0)
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false
  )
}

/** A regular file's size; 0 for anything else or nothing. */
async function sizeOf(path: string): Promise<number> {
  return stat(path).then(
    (s) => (s.isFile() ? s.size : 0),
    () => 0
  )
}
