/**
 * @file Public surface of the runtime's model execution: the worker-backed ModelRunner, the in-thread
 * ModelEngine it wraps, the runtime-owned KV cache and compile-or-reuse of graphs.
 * and the generation layer above it: sampling, stop rules, the streaming loop and TextModel.
 */
export { createRunner, type ModelRunner, type RunnerOptions } from './runner'
export { HeteroEngine, type HeteroEngineOptions, type HeteroSetupInfo } from './hetero-engine'
export { planPlacement, singleCpuDevice, type HeteroPlan, type SessionPlan, type StepPlan } from './hetero-plan'
export { DeviceHost, type DeviceHostOptions } from './device-host'
export { CommandChannel, serveCommands, createControlBuffer, MAX_COMMAND_ARGS, type CommandHandler } from './handoff'
export { ValueArena, parityOf, MAX_ARENA_BYTES, type ArenaInit, type ArenaSlot, type Parity, type SlotShape } from './value-arena'
export { runSchedule, TaskGraph, MAX_SCHEDULED_TASKS, type DeviceRecord, type ScheduledTask, type ScheduleOptions, type ScheduleReport } from './scheduler'
export { buildForwardGraph, HOST_DEVICE, type ForwardTask } from './task-graph'
export { UsageBoard, usageDelta, epochNowMs, MAX_USAGE_DEVICES, type DeviceUsage } from './usage'
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
} from './profiler'
export { graphTargetOf, profileParts, PROFILE_PART_RATIO, STACK_LAYERS, type GraphTarget, type ProfilePart } from './profile-graphs'
export { calibrationScales, deviceGroupTimings, devicePartitionTimings, groupSamples, MIN_CALIBRATION_SCALE, MIN_GROUP_MS, type PartRuns } from './profile-timing'
export { measureLink, LINK_SIZES_BYTES, type LinkMeasurement, type LinkSample } from './profile-link'
export type { PartTarget, ProfileSamplingRules, ProfileTarget, RunSample } from './profile-protocol'
export { startTsWorker, workerEntryUrl } from './ts-worker'
