/**
 * @file How the UI names and groups models: one on this computer by its file and what the loader read, one another
 * server runs by its name and the server's. Pure, no React.
 */
import { parseRemoteModelId, type ModelEntry } from '../../../preload/api'
import { formatBytes, formatParameters } from './format'

const FORMAT_NAMES: Readonly<Record<Exclude<ModelEntry['format'], 'remote'>, string>> = { gguf: 'GGUF', llama2c: 'llama2.c', hf: 'HF' }

/** The group of this computer's models in a picker. */
export const LOCAL_GROUP = 'This computer'

/** True for a model another server runs (Settings → Other servers), false for one on this computer. */
export function isRemoteModel(model: ModelEntry): boolean {
  return model.format === 'remote'
}

/** One line describing a model in a picker: another server's by its name and the server's (it has no size here). */
export function modelLabel(model: ModelEntry): string {
  if (model.format === 'remote') return model.server === undefined ? model.name : `${model.name} — ${model.server}`
  const details = [FORMAT_NAMES[model.format]]
  if (model.parameters !== null) details.push(formatParameters(model.parameters))
  if (model.quantization !== null) details.push(model.quantization)
  details.push(formatBytes(model.sizeBytes))
  return `${model.name} (${details.join(', ')})`
}

/** A picker's group of models: `key` tells groups apart (a server may be named like the local group). */
export interface ModelGroup {
  readonly key: string
  readonly label: string
  readonly models: readonly ModelEntry[]
}

/** The models in picker groups, this computer's first, then each server's as first listed; null when all are local. */
export function groupModels(models: readonly ModelEntry[]): ModelGroup[] | null {
  if (!models.some(isRemoteModel)) return null
  const groups = new Map<string, { key: string; label: string; models: ModelEntry[] }>([['local', { key: 'local', label: LOCAL_GROUP, models: [] }]])
  for (const m of models) {
    const key = isRemoteModel(m) ? `server:${m.server ?? ''}` : 'local'
    const group = groups.get(key) ?? { key, label: m.server ?? 'Another server', models: [] }
    group.models.push(m)
    groups.set(key, group)
  }
  return [...groups.values()].filter((g) => g.models.length > 0)
}

/**
 * A readable name for a model id the list no longer holds (a file moved away, a server removed): a path's file
 * name, a remote id's model part.
 */
export function missingModelName(modelId: string): string {
  const remote = parseRemoteModelId(modelId)
  if (remote !== null) return remote.model
  return modelId.split(/[\\/]/).at(-1) ?? modelId
}
