/**
 * @file How the UI names and groups models with other servers' among them: a remote model is labelled with its
 * server (no size), a picker groups the models (this computer, then each server) only when there are remote ones,
 * and a missing remote model is named by its model part.
 */
import { describe, expect, it } from 'vitest'
import type { ModelEntry } from '../../preload/api'
import { groupModels, isRemoteModel, missingModelName, modelLabel } from '../../renderer/src/lib/models'

const local: ModelEntry = {
  id: '/models/stories260K.gguf',
  name: 'stories260K.gguf',
  path: '/models/stories260K.gguf',
  folder: '/models',
  format: 'gguf',
  sizeBytes: 1_200_000,
  modifiedMs: 0,
  architecture: 'llama',
  quantization: 'F32',
  parameters: 293_000,
  contextLength: 2048,
  hasChatTemplate: false,
  problem: null,
  origin: 'folder'
}

/** A model of `server`, as models.list gives it. */
function remote(server: string, serverId: string, model: string): ModelEntry {
  return {
    ...local,
    id: `remote:${serverId}:${model}`,
    name: model,
    path: 'http://127.0.0.1:8000/v1',
    folder: server,
    format: 'remote',
    sizeBytes: 0,
    architecture: null,
    quantization: null,
    parameters: null,
    origin: 'server',
    server
  }
}

/** Each group's label and model names. */
const shape = (groups: ReturnType<typeof groupModels>): { label: string; names: string[] }[] | null => groups?.map((g) => ({ label: g.label, names: g.models.map((m) => m.name) })) ?? null

describe('models in the UI', () => {
  it('labels a remote model with its server and no size; a local one by what the loader read', () => {
    expect(modelLabel(local)).toBe('stories260K.gguf (GGUF, 293K, F32, 1.2 MB)')
    expect(modelLabel(remote('NPU box', 's1', 'qwen3-4b'))).toBe('qwen3-4b — NPU box')
    expect(isRemoteModel(remote('NPU box', 's1', 'qwen3-4b'))).toBe(true)
    expect(isRemoteModel(local)).toBe(false)
  })

  it('no groups without remote models; with them, this computer first, then one group per server in list order', () => {
    expect(groupModels([local])).toBeNull()
    expect(shape(groupModels([remote('NPU box', 's1', 'a'), local, remote('GPU box', 's2', 'b'), remote('NPU box', 's1', 'c')]))).toEqual([
      { label: 'This computer', names: ['stories260K.gguf'] },
      { label: 'NPU box', names: ['a', 'c'] },
      { label: 'GPU box', names: ['b'] }
    ])
    // no empty local group; a server named like it stays a group of its own
    const groups = groupModels([remote('This computer', 's3', 'x'), remote('NPU box', 's1', 'a')])
    expect(shape(groups)).toEqual([
      { label: 'This computer', names: ['x'] },
      { label: 'NPU box', names: ['a'] }
    ])
    expect(new Set(groups?.map((g) => g.key)).size).toBe(2)
  })

  it('names a missing model by its file name or, for a remote one, by its model id', () => {
    expect(missingModelName('/models/gone.gguf')).toBe('gone.gguf')
    expect(missingModelName('remote:s1:library/llama3:8b')).toBe('library/llama3:8b')
  })
})
