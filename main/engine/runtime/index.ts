/**
 * @file The runtime: runs a compiled model on this machine's devices. What runs together lives together:
 *
 *   text-model.ts     TextModel: what the app and the CLI hold — tokenizer + chat template on this thread,
 *                     the model in a worker (a ModelWorkerClient), and the GenerationLoop over both
 *   generation/       the generation loop (prompt → forward → sample → detokenize → stop rules), sampler, stop text
 *   model-worker/     the model worker thread: its client (promises on the caller's thread), its entry, its
 *                     wire protocol; the worker reads the weights where the caller's header parse says and
 *                     runs one of the two engines
 *   engine-choice.ts  chooseEngine: the one decision of which engine runs a placement
 *   forward.ts        what both engines share: the forward contract, its checks, the prefill chunking
 *   session/          SingleSessionEngine: the whole model as one ONNX session on the CPU (the fast path),
 *                     its runtime-owned KV cache, and the on-disk graph cache (openOrCompile)
 *   hetero/           DeviceWorkersEngine: one device worker per device (DeviceHost ↔ device-worker.ts /
 *                     DeviceExecutor), the value arena and control-block hand-off between them, the forward
 *                     DAG, its out-of-order scheduler, and the timing of one session a worker can do
 *   profile/          the profiler Auto plans from: times op-group graphs and the hand-off through the same
 *                     device workers (DeviceHost), and turns run medians into the planner's group times
 *   header-reader/    model headers (config, encodings, chat template) read by a worker thread, so listing the
 *                     models folders never parses a large header or tokenizer on the caller's thread
 *   context.ts, usage.ts, errors.ts, worker-thread.ts   the context policy, the live per-device busy board,
 *                     the runtime's errors, and how worker entries start from source or built
 *
 * Layers inside: generation and session import nothing of the others; hetero may use session (the KV cache,
 * the graph cache); profile uses hetero; model-worker uses session and hetero; header-reader stands alone; text-model uses model-worker
 * and generation (enforced in eslint.config.js).
 */
export { TextModel, type ChatMessage, type OpenModelOptions } from './text-model'
export {
  GenerationLoop,
  type ForwardModel,
  type Generation,
  type GenerationEvent,
  type GenerationResult,
  type GenerationStats,
  type GenerateRequest,
  type StopReason
} from './generation/generation-loop'
export { createSampler, DEFAULT_SAMPLING, validateSampling, type Sampler, type SamplingOptions } from './generation/sampler'
export { openModelWorker, type ModelHeader, type ModelWorkerClient, type ModelWorkerOptions } from './model-worker/model-worker-client'
export { chooseEngine, type EngineChoice } from './engine-choice'
export { chunkLengths, type ForwardEngine } from './forward'
export { SingleSessionEngine, type SingleSessionOptions } from './session/single-session-engine'
export { openCachedGraph, openOrCompile, type CompileInfo, type CachedGraphOptions } from './session/open-cached-graph'
export { LOAD_STAGES, type LoadProgress, type LoadProgressListener, type LoadStage } from './load-progress'
export { DeviceWorkersEngine, type DeviceWorkersOptions, type DeviceWorkersSetupInfo } from './hetero/device-workers-engine'
export type { ShadowLayers } from './hetero/device-setup'
export { DeviceHost, type DeviceHostOptions } from './hetero/device-host'
export { SCHEDULE_ORDERS, type ScheduleOrder } from './hetero/scheduler'
export { checkW8A8Request, loadW8A8, type W8A8EngineOptions, type W8A8Request } from './w8a8-setup'
export { KV_FORMATS, kvBlockBytes, kvLayoutOf, KV_SNAPSHOT_LAYOUT_VERSION, type KvFormat, type KvLayout } from './kv-snapshot'
export { ValueArena } from './hetero/value-arena'
export {
  profileCacheKeys,
  profileDevices,
  DEFAULT_LINK,
  DEFAULT_PAST_TOKENS,
  DEFAULT_PROFILE_SAMPLING,
  DEFAULT_PROFILE_TOKENS,
  type ProfileCacheKeys,
  type ProfileOptions,
  type ProfileProgress
} from './profile/profiler'
export { profileParts, PROFILE_PART_RATIO, STACK_LAYERS, type PartTarget, type ProfilePart, type ProfileTarget } from './profile/profile-graphs'
export { calibrationScales, deviceGroupTimings, devicePartitionTimings, groupSamples, MIN_CALIBRATION_SCALE, MIN_GROUP_MS, type PartRuns, type RunSample } from './profile/profile-timing'
export { measureLink, LINK_SIZES_BYTES, type LinkMeasurement, type LinkSample } from './profile/link'
export { resolveContext, DEFAULT_MAX_CONTEXT, MAX_ROPE_TABLE_POSITIONS } from './context'
export { UsageBoard, usageDelta, type DeviceUsage } from './usage'
export { ContextOverflowError, ForwardCancelledError, InvalidLogitsError, WorkerExitedError, ProtocolError } from './errors'
export { startWorkerThread, workerEntryUrl } from './worker-thread'
export { HeaderReader, HeaderReadError, HeaderWorkerError, HEADER_READ_LIMIT_MS } from './header-reader/header-reader'
export type { ModelFacts } from './header-reader/protocol'
