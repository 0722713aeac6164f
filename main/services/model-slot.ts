/**
 * @file The one model kept open for chat. Opening compiles (or loads from cache) its graphs and starts its
 * workers; switching to another model — or to another placement of the same model — disposes the previous
 * one first, so only one set of weights is in memory. Callers serialize their use (the chat queue), so
 * there is no locking here.
 */
import { TextModel } from '../engine'
import type { ModelEntry } from '../../preload/api'
import type { ModelPlacement } from './devices-service'
import { ApiError, errorMessage } from './errors'

/** Options every model is opened with. */
export interface ModelSlotOptions {
  /** compiled-graph cache folder */
  readonly cacheDir: string
  /** ONNX Runtime intra-op threads (default: all cores) */
  readonly threads?: number
}

/** Holds at most one open TextModel. */
export class ModelSlot {
  private current: { readonly id: string; readonly fileKey: string; readonly placementKey: string; readonly model: TextModel } | null = null

  constructor(private readonly options: ModelSlotOptions) {}

  /**
   * The open model for `entry` under `placed`, opening it (and closing any other) when the model, its files
   * (replaced at the same path: another size or mtime) or the placement differ.
   */
  async acquire(entry: ModelEntry, placed: ModelPlacement): Promise<TextModel> {
    const fileKey = `${entry.sizeBytes}:${entry.modifiedMs}`
    const open = this.current
    if (open !== null && open.id === entry.id && open.fileKey === fileKey && open.placementKey === placed.key) return open.model
    await this.release()
    try {
      const model = await TextModel.open(entry.path, {
        cacheDir: this.options.cacheDir,
        threads: this.options.threads,
        placement: placed.placement,
        devices: placed.devices
      })
      this.current = { id: entry.id, fileKey, placementKey: placed.key, model }
      return model
    } catch (err) {
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

  /** Closes the open model (its worker and session). */
  async release(): Promise<void> {
    const open = this.current
    this.current = null
    if (open !== null) await open.model.dispose()
  }
}
