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

/** Finds and describes models; descriptions are cached per file until its size or mtime changes. */
export class ModelsService {
  private readonly described = new Map<string, { readonly key: string; readonly entry: ModelEntry }>()

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
    } catch (err) {
      const problem = errorMessage(err)
      entry = { ...base, architecture: null, quantization: null, parameters: null, contextLength: null, hasChatTemplate: false, problem }
    }
    this.described.set(c.path, { key, entry })
    return entry
  }
}
