/**
 * @file The engine's public surface. Code outside main/engine imports only from here.
 */
export {
  loadModel,
  readFileCapped,
  readTextCapped,
  readWeights,
  calibrate,
  DEFAULT_SHADOW_PRUNED_PERCENT,
  type Calibration,
  ModelFormatError,
  type LoadedModel,
  type ModelConfig,
  type LoadOptions,
  type Tokenizer
} from './model'
export { calibrationPath, GRAPH_COMPILER_VERSION, modelFingerprint, readCalibration, resolveGraphCacheDir, writeCalibration } from './graph'
export {
  ContextOverflowError,
  InvalidLogitsError,
  DEFAULT_SAMPLING,
  LOAD_STAGES,
  TextModel,
  validateSampling,
  checkW8A8Request,
  KV_FORMATS,
  kvBlockBytes,
  KV_SNAPSHOT_LAYOUT_VERSION,
  kvLayoutOf,
  type KvFormat,
  type W8A8Request,
  type ChatMessage,
  type DeviceUsage,
  type Generation,
  type GenerationEvent,
  type GenerationResult,
  type GenerationStats,
  type GenerateRequest,
  type LoadProgress,
  type OpenModelOptions,
  type SamplingOptions,
  type StopReason
} from './runtime'
export {
  discoverDevices,
  discoverEpDevices,
  discoverAllDevices,
  checkRegistrationName,
  type ProviderOptions,
  VIRTUAL_NPU_LABEL,
  VIRTUAL_NPU_REGISTRATION,
  type EpDeviceOptions,
  type ProviderLibraryStatus,
  CONTRIB_OPS,
  type ContribOp,
  type DeviceContract,
  type DeviceInfo,
  type DeviceKind,
  type DeviceStatus,
  type DiscoverOptions,
  type ProbeCheck
} from './devices'
export {
  buildPreset,
  parsePlacement,
  parsePlacementShape,
  phaseDevices,
  predictPlacement,
  solvePlacement,
  PlacementError,
  MATMUL_GROUPS,
  OP_GROUP_NAMES,
  PRESET_IDS,
  PRESET_LABELS,
  planAuto,
  defaultPrefillChunkTokens,
  maxPrefillChunkTokens,
  DEFAULT_PREFILL_CHUNK_TOKENS,
  STATIC_CHUNK_TOKENS,
  staticChunkRange,
  MAX_PREFILL_CHUNK_TOKENS,
  parseProfile,
  weightInfoOf,
  weightInfoOfTypes,
  type AutoPlan,
  type Placement,
  type PresetId,
  type Profile,
  type WeightInfo
} from './plan'
export { checkGraphCacheWritable } from './graph'
export { chooseEngine, profileCacheKeys, profileDevices, type EngineChoice, type ProfileCacheKeys, type ProfileOptions } from './runtime'
/** How worker entries start from source or built; the store's search worker starts the same way. */
export { startWorkerThread, workerEntryUrl } from './runtime'
export { HeaderReader, HeaderReadError, HeaderWorkerError, HEADER_READ_LIMIT_MS, type ModelFacts } from './runtime'
