/** @file Public surface of the planner: Placement JSON and its validator, segments, presets, profiles, cost model, solver. */
export {
  assignGroups,
  defaultPrefillChunkTokens,
  maxPrefillChunkTokens,
  isMatmulGroup,
  layerMatches,
  phaseDevices,
  PlacementError,
  DEFAULT_PREFILL_CHUNK_TOKENS,
  STATIC_CHUNK_TOKENS,
  staticChunkRange,
  shadowDeviceOf,
  FINAL_GROUPS,
  MATMUL_GROUPS,
  MAX_PHASE_ENTRIES,
  MAX_PLACEMENT_NAME_LENGTH,
  MAX_PREFILL_CHUNK_TOKENS,
  OP_GROUP_NAMES,
  PHASES,
  PLACEMENT_VERSION,
  type GroupAssignment,
  type GroupOverride,
  type LayerRef,
  type MatmulGroup,
  type OpGroupName,
  type Partition,
  type Phase,
  type PhasePlacement,
  type Placement,
  type RowPartition,
  type SequencePartition
} from './placement'
export { parsePlacement } from './validate'
export { parsePlacementShape } from './shape'
export {
  deviceRefusal,
  groupRefusal,
  largestWeightElements,
  requiredContribOps,
  weightInfoOf,
  weightInfoOfTypes,
  FLOAT32_WEIGHTS,
  type WeightInfo
} from './contract'
export { rowCuts, rowShareOf, rowSplitUnit, type WeightCut, type WeightName } from './rows'
export {
  placementToSegments,
  type Join,
  type OutputRange,
  type PartitionSegment,
  type PartSegment,
  type PlanSegment,
  type RowSlice,
  type RunSegment,
  type TokenSlice,
  type WeightRange
} from './segments'
export { buildPreset, PRESET_IDS, PRESET_LABELS, type PresetId, type PresetOptions, type PresetResult } from './presets'
export { deviceLabel, GPU_KINDS } from './device-pick'
export {
  groupMs,
  interpolateMs,
  linkCost,
  modelShapeKey,
  partMs,
  parseProfile,
  ProfileError,
  MAX_MODEL_SHAPE_LENGTH,
  MAX_PROFILE_DEVICES,
  MAX_PROFILE_LINKS,
  MAX_PROFILE_PARTITIONS,
  MAX_PROFILE_SAMPLES,
  MAX_SAMPLE_MS,
  MAX_SAMPLE_TOKENS,
  PROFILE_VERSION,
  type DeviceProfile,
  type GroupTiming,
  type LinkCost,
  type LinkProfile,
  type PartitionTiming,
  type Profile,
  type TimingSample
} from './profile'
export { phaseTokens, predictAssignments, predictPhaseMs, predictPlacement, type CostContext, type Prediction } from './cost'
export { solvePlacement, DEFAULT_RATIO_GRID, type Solution, type SolverOptions } from './solver'
export { planAuto, type AutoPlan } from './auto'
export { describeShape, explainSolution, formatMs, type MatmulChoice, type PhaseOutcome, type PhaseShape } from './explain'
