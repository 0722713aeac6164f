/**
 * @file The models the user can chat with: the built-in folders plus the ones added in Settings, scanned
 * for model files, each described by opening its headers only (`loadModel(..., { weights: false })` in a
 * worker thread, HeaderReader: its reads are bounded and refuse anything but regular files, and its parsing of
 * a large header or tokenizer never holds up this thread). A broken file is listed with `problem` set; a
 * missing folder is listed with `exists: false`, an unreadable one with its `problem`.
 *
 * Scanning walks every folder (with `/` added, about a second), so it runs on demand — the models list
 * call, adding or removing a folder — and the last scan is kept for everything else. Picking the model for
 * a reply checks only that model's files (a stat, never an open) against the listing and rescans when they
 * changed, so a file replaced at the same path is noticed before the next reply. fs.watch was not chosen:
 * recursive watching is not available everywhere (Linux needs one inotify watch per folder, against a
 * per-user limit), misses changes on network and FUSE file systems, and would watch whole trees to learn
 * about the one model in use.
 */
import { rm } from 'node:fs/promises'
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path'
import { HeaderReader, HeaderWorkerError, type ModelConfig } from '../engine'
import { parseRemoteModelId, type ModelEntry, type ModelFolder, type ModelOrigin } from '../../preload/api'
import { ApiError, errorMessage, invalid } from './errors'
import { modelFileCandidate, modelFileTotals, scanModelFolder, type ModelCandidate } from './model-scan'
import { isDirectory } from './paths'
import type { SettingsService } from './settings-service'

/** Learned parameters implied by a config (embedding, layers, final norm, untied head). */
export function parameterCount(c: ModelConfig): number {
  const qDim = c.nHeads * c.headDim
  const kvDim = c.nKvHeads * c.headDim
  const perLayer =
    2 * c.dim + // attention and FFN norms
    c.dim * qDim + // wq
    2 * c.dim * kvDim + // wk, wv
    qDim * c.dim + // wo
    3 * c.dim * c.hiddenDim + // gate, up, down
    (c.qkvBias ? qDim + 2 * kvDim : 0)
  return c.vocabSize * c.dim * (c.tiedEmbeddings ? 1 : 2) + c.nLayers * perLayer + c.dim
}

/** Header facts of a usable model: what placements are resolved against. */
export interface ModelHeader {
  readonly entry: ModelEntry
  readonly config: ModelConfig
  /** every tensor encoding in the file, e.g. ['f32', 'q4_k', 'q6_k'] */
  readonly tensorTypes: readonly string[]
}

/** The models of other servers, as ModelsService needs them (remote/servers.ts). */
export interface RemoteModels {
  modelEntries(): Promise<ModelEntry[]>
  entry(modelId: string): Promise<ModelEntry | undefined>
}

/** A cached description: the entry, and the header facts when the model could be read. */
interface Described {
  readonly key: string
  readonly entry: ModelEntry
  readonly header: { readonly config: ModelConfig; readonly tensorTypes: readonly string[] } | null
}

/** One scan of every folder and added file: the models found, each folder's problem, and what it scanned. */
interface Scan {
  /** the folders scanned and whether each existed, and the added files, as JSON: a different key means the scan is out of date */
  readonly foldersKey: string
  readonly entries: readonly ModelEntry[]
  /** folder path -> why it could not be searched (fully), or null */
  readonly problems: ReadonlyMap<string, string | null>
}

/** The entry for `wanted`, else (wanted null) the first usable one, chat models first. */
function choose(entries: readonly ModelEntry[], wanted: string | null): ModelEntry | undefined {
  if (wanted !== null) return entries.find((m) => m.id === wanted)
  const usable = entries.filter((m) => m.problem === null)
  return usable.find((m) => m.hasChatTemplate) ?? usable[0]
}

/** Finds and describes models; keeps the last scan, and descriptions per file until its size or mtime changes. */
export class ModelsService {
  private readonly described = new Map<string, Described>()
  private last: Scan | null = null
  /** the scan in flight; a request for the same folders joins it, one for other folders queues behind it */
  private running: { readonly foldersKey: string; readonly scan: Promise<Scan> } | null = null
  private scans = 0

  /** headers are parsed by a worker thread: a large one must not stall the calls and streams on this one */
  private readonly headers = new HeaderReader()

  /**
   * `builtInDirs`: folders always scanned; `ownDir`: Tandem's own models folder (where downloads go), whose
   * models Remove deletes from the disk (default: the first built-in folder).
   */
  constructor(
    private readonly settings: SettingsService,
    private readonly builtInDirs: readonly string[],
    private readonly ownDir: string | null = builtInDirs[0] ?? null,
    /** the models of other servers (Settings → Other servers), listed after this computer's */
    private readonly remote: RemoteModels | null = null
  ) {}

  /** Ends the header worker. */
  dispose(): Promise<void> {
    return this.headers.dispose()
  }

  /** Built-in folders first, then the user's, each with whether it exists right now and its problem at the last scan. */
  folders(): ModelFolder[] {
    const problem = (path: string): string | null => this.last?.problems.get(path) ?? null
    const builtIn = this.builtInDirs.map((p) => ({ path: p, exists: isDirectory(p), builtIn: true, problem: problem(p) }))
    const user = this.settings
      .modelFolders()
      .filter((p) => !this.builtInDirs.includes(p))
      .map((p) => ({ path: p, exists: isDirectory(p), builtIn: false, problem: problem(p) }))
    return [...builtIn, ...user]
  }

  /** The folders after a scan of them (the last one when the folders are unchanged), so each shows its problem. */
  async scannedFolders(): Promise<ModelFolder[]> {
    await this.current()
    return this.folders()
  }

  /** Adds a folder the user picked; it must be an absolute path to an existing folder. The folders are rescanned. */
  async addFolder(folder: string): Promise<ModelFolder[]> {
    if (!isAbsolute(folder)) throw invalid(`Choose the models folder by its full path (got "${folder}").`)
    const abs = resolve(folder)
    if (!isDirectory(abs)) throw invalid(`Folder not found: ${abs}. Check the path, or create the folder and put model files in it.`)
    if (!this.builtInDirs.includes(abs)) this.settings.addModelFolder(abs)
    await this.rescan()
    return this.folders()
  }

  /** Removes a folder the user added (built-in folders stay). The folders are rescanned. */
  async removeFolder(folder: string): Promise<ModelFolder[]> {
    const abs = resolve(folder)
    if (this.builtInDirs.includes(abs)) throw invalid(`${abs} is a built-in models folder and cannot be removed.`)
    if (!this.settings.removeModelFolder(abs)) throw new ApiError('NotFoundError', `${abs} is not in the list of model folders.`)
    await this.rescan()
    return this.folders()
  }

  /**
   * Adds one model file by its full path: the loader reads its header first, and a file it refuses is refused
   * with the loader's reason (ModelError) and not stored. A file already listed (in a models folder) is not
   * stored again. Resolves with its entry.
   */
  async addFile(file: string): Promise<ModelEntry> {
    if (!isAbsolute(file)) throw invalid(`Choose the model file by its full path (got "${file}").`)
    const abs = resolve(file)
    const listed = (await this.rescan()).entries.find((m) => m.path === abs && m.problem === null)
    if (listed !== undefined) return listed
    const candidate = await modelFileCandidate(abs)
    if ('problem' in candidate) throw invalid(candidate.problem)
    const entry = await this.describe(candidate, 'added-file')
    if (entry.problem !== null) throw new ApiError('ModelError', `${entry.name} cannot be used: ${entry.problem}`)
    this.settings.addModelFile(abs)
    const added = (await this.rescan()).entries.find((m) => m.id === entry.id)
    if (added === undefined) throw new ApiError('NotFoundError', `${abs} disappeared while it was added.`)
    return added
  }

  /**
   * Takes a model off the list: an added file is forgotten (the file stays where it is); a model in Tandem's own
   * models folder is deleted from the disk; a model found in another folder is refused (its folder is removed
   * instead). A default model removed stops being the default. Resolves with the list after.
   */
  async remove(modelId: string): Promise<ModelEntry[]> {
    if (parseRemoteModelId(modelId) !== null) throw invalid('A model of another server goes with its server: remove the server in Settings → Other servers.')
    const entry = (await this.rescan()).entries.find((m) => m.id === modelId)
    if (entry === undefined) throw new ApiError('NotFoundError', `${modelId} is not in the list of models.`)
    if (entry.origin === 'folder') {
      throw invalid(`${entry.name} was found in the models folder ${entry.folder}: remove that folder, or delete the file there yourself.`)
    }
    if (entry.origin === 'added-file') this.settings.removeModelFile(entry.path)
    else await this.deleteOwn(entry)
    if (this.settings.get().defaultModelId === entry.id) this.settings.update({ defaultModelId: null })
    return this.list()
  }

  /** Deletes a model of Tandem's own folder (a file, or a Hugging Face model's folder), never the folder itself. */
  private async deleteOwn(entry: ModelEntry): Promise<void> {
    const own = this.ownDir
    if (own === null || entry.path === own || !entry.path.startsWith(own + sep)) throw invalid(`${entry.path} is not in Tandem's models folder.`)
    try {
      await rm(entry.path, { recursive: entry.format === 'hf', force: true })
    } catch (err) {
      throw new ApiError('ModelError', `${entry.name} could not be deleted (${errorMessage(err)}). Close what uses it and try again.`, { cause: err })
    }
  }

  /** Every model in every existing folder, freshly scanned, in folder order; a file reached twice (links, overlapping folders) is listed once. */
  async list(): Promise<ModelEntry[]> {
    const [scan, remote] = await Promise.all([this.rescan(), this.remote?.modelEntries() ?? []])
    return [...scan.entries, ...remote]
  }

  /** How many times the folders were scanned (a scan walks every folder; replies must not cause one each). */
  get scanCount(): number {
    return this.scans
  }

  /**
   * The model to run: `modelId`, else the default model, else the first usable one (chat models first).
   * From the last scan, rescanning when the model is not in it or its files changed since.
   * Throws NoModelError when there is none (or the wanted one is gone), ModelError when it cannot be used.
   */
  async pick(modelId: string | null): Promise<ModelEntry> {
    const wanted = this.wanted(modelId)
    if (wanted !== null && parseRemoteModelId(wanted) !== null) return this.pickRemote(wanted)
    let entry = choose((await this.current()).entries, wanted)
    if (entry === undefined || !(await this.unchanged(entry))) entry = choose((await this.rescan()).entries, wanted)
    if (wanted !== null) {
      if (entry === undefined) {
        throw new ApiError('NoModelError', `The model ${wanted} is not available any more. Choose another model for this conversation, or add its folder in Settings.`)
      }
      if (entry.problem !== null) throw new ApiError('ModelError', `The model ${entry.name} cannot be used: ${entry.problem}`)
      return entry
    }
    // nothing usable on this computer: another server's model will do
    entry ??= choose((await this.remote?.modelEntries()) ?? [], null)
    if (entry === undefined) {
      throw new ApiError('NoModelError', 'No model is available. Add a models folder in Settings (a folder with .gguf files, llama2.c checkpoints or Hugging Face model folders).')
    }
    return entry
  }

  /** The id of the model a request for `modelId` runs: it, else the default model's; null when no default is set. */
  wanted(modelId: string | null): string | null {
    return modelId ?? this.settings.get().defaultModelId
  }

  /** A model of another server, asking it again when it is not listed or not usable now. */
  private async pickRemote(wanted: string): Promise<ModelEntry> {
    const entry = await this.remote?.entry(wanted)
    if (entry === undefined) {
      throw new ApiError('NoModelError', 'The model of another server is not offered any more (the server was removed, or no longer lists it). Choose another model for this conversation.')
    }
    if (entry.problem !== null) throw new ApiError('RemoteError', `${entry.name} on ${entry.server ?? 'another server'} cannot be used now: ${entry.problem}`)
    return entry
  }

  /** Header facts of a listed, usable model (from the scan's cache), or null. */
  header(entry: ModelEntry): ModelHeader | null {
    const d = this.described.get(entry.path)
    const same = d !== undefined && d.entry.id === entry.id && d.entry.sizeBytes === entry.sizeBytes && d.entry.modifiedMs === entry.modifiedMs
    return !same || d.header === null ? null : { entry: d.entry, ...d.header }
  }

  /** The last scan while the folders are the same ones, else a new scan. */
  private current(): Promise<Scan> {
    const last = this.last
    return last !== null && last.foldersKey === this.sourcesKey(this.folders()) ? Promise.resolve(last) : this.rescan()
  }

  /** Identifies what a scan covers, for the scan cache: the folders (paths and whether each exists) and the added files. */
  private sourcesKey(folders: readonly ModelFolder[]): string {
    return JSON.stringify([folders.map((f) => [f.path, f.exists]), this.settings.modelFiles()])
  }

  /** Scans every folder now; joins a scan of the same folders already running. */
  private rescan(): Promise<Scan> {
    const folders = this.folders()
    const key = this.sourcesKey(folders)
    const running = this.running
    if (running !== null && running.foldersKey === key) return running.scan
    // Scans run one after another, so an older one can never overwrite a newer result.
    const before = running === null ? Promise.resolve() : running.scan.then(() => undefined)
    const scan: Promise<Scan> = before.then(() => this.scanAll(key, folders))
    this.running = { foldersKey: key, scan }
    const clear = (): void => {
      if (this.running?.scan === scan) this.running = null
    }
    scan.then(clear, clear)
    return scan
  }

  private async scanAll(foldersKey: string, folders: readonly ModelFolder[]): Promise<Scan> {
    this.scans++
    const entries: ModelEntry[] = []
    const problems = new Map<string, string | null>()
    const seen = new Set<string>()
    for (const folder of folders) {
      if (!folder.exists) continue
      const { candidates, problem } = await scanModelFolder(folder.path)
      problems.set(folder.path, problem)
      for (const candidate of candidates) {
        if (seen.has(candidate.realPath)) continue
        seen.add(candidate.realPath)
        entries.push(await this.describe(candidate, candidate.folder === this.ownDir ? 'own-folder' : 'folder'))
      }
    }
    for (const file of this.settings.modelFiles()) {
      const candidate = await modelFileCandidate(file)
      if ('problem' in candidate) {
        entries.push(missingFile(file, candidate.problem))
        continue
      }
      if (seen.has(candidate.realPath)) continue
      seen.add(candidate.realPath)
      entries.push(await this.describe(candidate, 'added-file'))
    }
    // Descriptions of models no longer listed would otherwise pile up for the app's lifetime.
    const listed = new Set(entries.map((e) => e.path))
    for (const path of this.described.keys()) if (!listed.has(path)) this.described.delete(path)
    const scan = { foldersKey, entries, problems }
    this.last = scan
    return scan
  }

  /** Whether the entry's files still have the size and mtime the listing saw (stat only). */
  private async unchanged(entry: ModelEntry): Promise<boolean> {
    const { format } = entry
    if (format === 'remote') return true
    const now = await modelFileTotals({ path: entry.path, folder: entry.folder, format })
    return now !== null && now.sizeBytes === entry.sizeBytes && now.mtimeMs === entry.modifiedMs
  }

  private async describe(c: ModelCandidate, origin: ModelOrigin): Promise<ModelEntry> {
    const key = `${c.format}:${c.sizeBytes}:${c.mtimeMs}:${origin}`
    const cached = this.described.get(c.path)
    if (cached !== undefined && cached.key === key) return cached.entry
    const base = {
      id: c.path,
      name: basename(c.path),
      path: c.path,
      folder: c.folder,
      format: c.format,
      sizeBytes: c.sizeBytes,
      modifiedMs: c.mtimeMs,
      origin
    }
    let entry: ModelEntry
    let header: Described['header'] = null
    try {
      const m = await this.headers.read(c.path)
      entry = {
        ...base,
        architecture: m.config.architecture,
        quantization: m.quantization,
        parameters: parameterCount(m.config),
        contextLength: m.config.contextLength,
        hasChatTemplate: m.hasChatTemplate,
        problem: null
      }
      header = { config: m.config, tensorTypes: m.tensorTypes }
    } catch (err) {
      const problem = errorMessage(err)
      entry = { ...base, architecture: null, quantization: null, parameters: null, contextLength: null, hasChatTemplate: false, problem }
      // the reader failed, not the file (a stuck read, shutdown): listed as such now, read again next scan
      if (err instanceof HeaderWorkerError) return entry
    }
    this.described.set(c.path, { key, entry, header })
    return entry
  }
}

/** An added file that is gone or unreadable: listed with why, so it can be removed. */
function missingFile(file: string, problem: string): ModelEntry {
  const name = basename(file)
  return {
    id: file,
    name,
    path: file,
    folder: dirname(file),
    format: name.toLowerCase().endsWith('.gguf') ? 'gguf' : 'llama2c',
    sizeBytes: 0,
    modifiedMs: 0,
    origin: 'added-file',
    architecture: null,
    quantization: null,
    parameters: null,
    contextLength: null,
    hasChatTemplate: false,
    problem
  }
}
