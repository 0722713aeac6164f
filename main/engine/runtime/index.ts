/**
 * @file Public surface of the runtime's model execution: the worker-backed ModelRunner, the in-thread
 * ModelEngine it wraps, the runtime-owned KV cache and compile-or-reuse of graphs.
 * (generate.ts, sampler.ts, text-model.ts are exported by their owners / main/engine/index.ts.)
 */
export { createRunner, type ModelRunner, type RunnerOptions } from './runner'
export { ModelEngine, DEFAULT_PREFILL_CHUNK, MAX_PREFILL_CHUNK, type EngineOptions } from './model-engine'
export { KvCache, type KvCacheShape } from './kv-cache'
export { openModelGraph, resolveContext, DEFAULT_MAX_CONTEXT, MAX_ROPE_TABLE_POSITIONS, type CompileInfo, type OpenGraphOptions } from './load-graph'
export { ContextOverflowError, WorkerExitedError, ProtocolError } from './errors'
