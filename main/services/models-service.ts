/**
 * @file The models the user can chat with: the built-in folders plus the ones added in Settings, scanned
 * for model files, each described by opening its headers only (`loadModel(..., { weights: false })`).
 * A broken file is listed with `problem` set; a missing folder is listed with `exists: false`.
 */
import { basename, isAbsolute, resolve } from 'node:path'
import { loadModel, type ModelConfig } from '../engine'
import type { ModelEntry, ModelFolder } from '../../preload/api'
import { ApiError, errorMessage, invalid } from './errors'
import { scanModelFolder, type ModelCandidate } from './model-scan'
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

/** A cached description: the entry, and the header facts when the model could be read. */
interface Described {
  readonly key: string
  readonly entry: ModelEntry
  readonly header: { readonly config: ModelConfig; readonly tensorTypes: readonly string[] } | null
}

/** Finds and describes models; descriptions are cached per file until its size or mtime changes. */
export class ModelsService {
  private readonly described = new Map<string, Described>()

  constructor(
    private readonly settings: SettingsService,
    private readonly builtInDirs: readonly string[]
  ) {}

  /** Built-in folders first, then the user's, each with whether it exists right now. */
  folders(): ModelFolder[] {
    const builtIn = this.builtInDirs.map((p) => ({ path: p, exists: isDirectory(p), builtIn: true }))
    const user = this.settings
      .modelFolders()
      .filter((p) => !this.builtInDirs.includes(p))
      .map((p) => ({ path: p, exists: isDirectory(p), builtIn: false }))
    return [...builtIn, ...user]
  }

  /** Adds a folder the user picked; it must be an absolute path to an existing folder. */
  addFolder(folder: string): ModelFolder[] {
    if (!isAbsolute(folder)) throw invalid(`Choose the models folder by its full path (got "${folder}").`)
    const abs = resolve(folder)
    if (!isDirectory(abs)) throw invalid(`Folder not found: ${abs}. Check the path, or create the folder and put model files in it.`)
    if (!this.builtInDirs.includes(abs)) this.settings.addModelFolder(abs)
    return this.folders()
  }

  /** Removes a folder the user added (built-in folders stay). */
  removeFolder(folder: string): ModelFolder[] {
    const abs = resolve(folder)
    if (this.builtInDirs.includes(abs)) throw invalid(`${abs} is a built-in models folder and cannot be removed.`)
    if (!this.settings.removeModelFolder(abs)) throw new ApiError('NotFoundError', `${abs} is not in the list of model folders.`)
    return this.folders()
  }

  /** Every model in every existing folder, in folder order; a file in two overlapping folders is listed once. */
  async list(): Promise<ModelEntry[]> {
    const entries: ModelEntry[] = []
    const seen = new Set<string>()
    for (const folder of this.folders()) {
      if (!folder.exists) continue
      for (const candidate of await scanModelFolder(folder.path)) {
        if (seen.has(candidate.path)) continue
        seen.add(candidate.path)
        entries.push(await this.describe(candidate))
      }
    }
    return entries
  }

  /** The listed model with this id, or undefined. */
  async find(modelId: string): Promise<ModelEntry | undefined> {
    return (await this.list()).find((m) => m.id === modelId)
  }

  /**
   * The model to run: `modelId`, else the default model, else the first usable one (chat models first).
   * Throws NoModelError when there is none (or the wanted one is gone), ModelError when it cannot be used.
   */
  async pick(modelId: string | null): Promise<ModelEntry> {
    const models = await this.list()
    const wanted = modelId ?? this.settings.get().defaultModelId
    if (wanted !== null) {
      const entry = models.find((m) => m.id === wanted)
      if (entry === undefined) {
        throw new ApiError('NoModelError', `The model ${wanted} is not available any more. Choose another model for this conversation, or add its folder in Settings.`)
      }
      if (entry.problem !== null) throw new ApiError('ModelError', `The model ${entry.name} cannot be used: ${entry.problem}`)
      return entry
    }
    const usable = models.filter((m) => m.problem === null)
    const entry = usable.find((m) => m.hasChatTemplate) ?? usable[0]
    if (entry === undefined) {
      throw new ApiError('NoModelError', 'No model is available. Add a models folder in Settings (a folder with .gguf files, llama2.c checkpoints or Hugging Face model folders).')
    }
    return entry
  }

  /** Header facts of a listed, usable model (from the scan's cache), or null. */
  header(entry: ModelEntry): ModelHeader | null {
    const d = this.described.get(entry.path)
    return d === undefined || d.header === null || d.entry.id !== entry.id ? null : { entry: d.entry, ...d.header }
  }

  private async describe(c: ModelCandidate): Promise<ModelEntry> {
    const key = `${c.format}:${c.sizeBytes}:${c.mtimeMs}`
    const cached = this.described.get(c.path)
    if (cached !== undefined && cached.key === key) return cached.entry
    const base = {
      id: c.path,
      name: basename(c.path),
      path: c.path,
      folder: c.folder,
      format: c.format,
      sizeBytes: c.sizeBytes
    }
    let entry: ModelEntry
    let header: Described['header'] = null
    try {
      const m = await loadModel(c.path, { weights: false })
      entry = {
        ...base,
        architecture: m.config.architecture,
        quantization: m.quantization,
        parameters: parameterCount(m.config),
        contextLength: m.config.contextLength,
        hasChatTemplate: m.chatTemplate !== null,
        problem: null
      }
      header = { config: m.config, tensorTypes: [...m.tensorTypes] }
    } catch (err) {
      const problem = errorMessage(err)
      entry = { ...base, architecture: null, quantization: null, parameters: null, contextLength: null, hasChatTemplate: false, problem }
    }
    this.described.set(c.path, { key, entry, header })
    return entry
  }
}
