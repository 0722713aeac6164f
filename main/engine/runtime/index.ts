/**
 * @file Public surface of the runtime's model execution: the worker-backed ModelRunner, the in-thread
 * ModelEngine it wraps, the runtime-owned KV cache and compile-or-reuse of graphs.
 * and the generation layer above it: sampling, stop rules, the streaming loop and TextModel.
 */
export { createRunner, type ModelRunner, type RunnerOptions } from './runner'
export { ModelEngine, DEFAULT_PREFILL_CHUNK, MAX_PREFILL_CHUNK, type EngineOptions } from './model-engine'
export { KvCache, type KvCacheShape } from './kv-cache'
export { openModelGraph, resolveContext, DEFAULT_MAX_CONTEXT, MAX_ROPE_TABLE_POSITIONS, type CompileInfo, type OpenGraphOptions } from './load-graph'
export { ContextOverflowError, WorkerExitedError, ProtocolError } from './errors'
export {
  Generator,
  type ForwardRunner,
  type Generation,
  type GenerationEvent,
  type GenerationResult,
  type GenerationStats,
  type GenerateRequest,
  type StopReason
} from './generate'
export { createSampler, DEFAULT_SAMPLING, validateSampling, type Sampler, type SamplingOptions } from './sampler'
export { StopStringFilter } from './stop-text'
export { TextModel, type ChatMessage, type OpenModelOptions } from './text-model'
