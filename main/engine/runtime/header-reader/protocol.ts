/**
 * @file The header worker's messages (header-worker.ts ⇄ header-reader.ts) and the readers that check them on
 * arrival: a worker message is a boundary like any other.
 */
import { failWith, FieldReader } from '../../../common/reader'
import { readModelConfig, type ModelConfig } from '../../model'
import { ProtocolError } from '../errors'

/** What the app needs to list a model and plan for it, read from its header without its weights. */
export interface ModelFacts {
  readonly config: ModelConfig
  /** human summary, e.g. "Q4_K_M (q4_k, q6_k, f32)" */
  readonly quantization: string
  /** every distinct tensor encoding, e.g. ['f32', 'q4_k', 'q6_k'] */
  readonly tensorTypes: readonly string[]
  readonly hasChatTemplate: boolean
}

/** Parent → worker: read the header of the model at `path`. */
export interface HeaderRequest {
  readonly id: number
  readonly path: string
}

/** Worker → parent: the facts, or why the model could not be read (the loader's message). */
export type HeaderResponse = { readonly id: number; readonly facts: ModelFacts } | { readonly id: number; readonly error: string }

const fail = failWith((message) => new ProtocolError(message))

/** Longest path or error text a message may carry; only stops garbage. */
const MAX_TEXT_CHARS = 100_000

/** Most tensor encodings one model lists (GGML has about 40). */
const MAX_TENSOR_TYPES = 64

export function readRequest(value: unknown): HeaderRequest {
  const r = new FieldReader(fail, 'request', value, ['id', 'path'])
  return { id: r.int('id', 0, Number.MAX_SAFE_INTEGER), path: r.text('path', MAX_TEXT_CHARS) }
}

export function readResponse(value: unknown): HeaderResponse {
  const r = new FieldReader(fail, 'response', value, ['id'], ['facts', 'error'])
  const id = r.int('id', 0, Number.MAX_SAFE_INTEGER)
  if (r.raw('error') !== undefined) return { id, error: r.text('error', MAX_TEXT_CHARS) }
  const f = new FieldReader(fail, 'response.facts', r.raw('facts'), ['config', 'quantization', 'tensorTypes', 'hasChatTemplate'])
  return {
    id,
    facts: {
      config: readModelConfig(fail, 'response.facts.config', f.raw('config')),
      quantization: f.text('quantization', MAX_TEXT_CHARS),
      tensorTypes: f.strings('tensorTypes', MAX_TENSOR_TYPES, MAX_TEXT_CHARS),
      hasChatTemplate: f.bool('hasChatTemplate')
    }
  }
}
