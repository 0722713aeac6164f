/**
 * @file Public surface of the runtime's model execution: the worker-backed ModelWorkerClient, the in-thread
 * SingleSessionEngine it wraps, the runtime-owned KV cache and compile-or-reuse of graphs.
 * and the generation layer above it: sampling, stop rules, the streaming loop and TextModel.
 */
export { openModelWorker, type ModelWorkerClient, type ModelWorkerOptions } from './model-worker/model-worker-client'
export { DeviceWorkersEngine, type DeviceWorkersOptions, type DeviceWorkersSetupInfo } from './hetero/device-workers-engine'
export { deviceSetupOf, type DeviceSetup, type SetupGraph, type PhaseStep } from './hetero/device-setup'
export { chooseEngine, type EngineChoice } from './engine-choice'
export { chunkLengths, type ForwardEngine } from './forward'
export { DeviceHost, type DeviceHostOptions } from './hetero/device-host'
export { CommandChannel, serveCommands, createControlBuffer, MAX_COMMAND_ARGS, type CommandHandler } from './hetero/handoff'
export { ValueArena, parityOf, MAX_ARENA_BYTES, type ArenaInit, type ArenaSlot, type Parity, type SlotShape } from './hetero/value-arena'
export { runSchedule, type DeviceRecord, type ScheduleOptions, type ScheduleReport } from './hetero/scheduler'
export { TaskGraph, MAX_SCHEDULED_TASKS, type ScheduledTask } from './hetero/task-graph'
export { buildForwardDag, HOST_DEVICE, type ForwardTask } from './hetero/forward-dag'
export { UsageBoard, usageDelta, epochNowMs, MAX_USAGE_DEVICES, type DeviceUsage } from './usage'
export { SingleSessionEngine, type SingleSessionOptions } from './session/single-session-engine'
export { KvCache, type KvCacheShape } from './session/kv-cache'
export { openCachedGraph, openOrCompile, type CompileInfo, type CachedGraphOptions } from './session/open-cached-graph'
export { resolveContext, DEFAULT_MAX_CONTEXT, MAX_ROPE_TABLE_POSITIONS } from './context'
export { ContextOverflowError, ForwardCancelledError, WorkerExitedError, ProtocolError } from './errors'
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
export { StopStringFilter } from './generation/stop-text'
export { TextModel, type ChatMessage, type OpenModelOptions } from './text-model'
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
export type { SamplingRules } from './hetero/session-timing'
export { startWorkerThread, workerEntryUrl } from './worker-thread'
