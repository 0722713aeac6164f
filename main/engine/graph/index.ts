/** @file Public surface of the graph compiler: op groups, segment specs, compilation, the on-disk graph cache. */
export { compileModel, compileSegment, checkCompilable, kvOutputValues, GRAPH_COMPILER_VERSION, KV_OUTPUT, type CompilableModel, type CompileSink } from './compile'
export { graphTargetOf, resolveGraphOptions, type GraphOptions, type GraphTarget, type ResolvedGraphOptions } from './emit-context'
export { checkGroupPart, partOutputOf, type GroupPart, type PartOutputRange, type PartWeightName, type PartWeightRange } from './partition'
export { int8ActivationBlock, int8RoundingOf } from './linear'
export {
  modelOpGroups,
  segmentSpec,
  wholeModelSegment,
  describeValue,
  modelResultValues,
  LAYER_GROUP_KINDS,
  VALUE,
  type GroupKind,
  type OpGroup,
  type SegmentSpec
} from './op-groups'
export { GraphTooLargeError, MAX_PROTO_BYTES, ONNX_IR_VERSION, ONNX_OPSET } from './onnx-builder'
export { packNBits, unpackNBits, type NBitsWeight } from './quant-pack'
export {
  resolveGraphCacheDir,
  graphCacheKey,
  modelContentHash,
  modelContentHashPaced,
  modelFingerprint,
  segmentCacheKey,
  shadowCacheKey,
  cachedGraphPath,
  cachedGraphExists,
  graphDataPath,
  graphHashPath,
  recordedContentHash,
  removeCachedGraph,
  writeCompiledGraph,
  writeGraphAtomic,
  checkGraphCacheWritable
} from './cache'
export { ExternalWeights, EXTERNAL_ALIGNMENT, EXTERNAL_MIN_BYTES, type ExternalSpan } from './external-data'
export { GraphBuilder, MS_DOMAIN, type AttrValue, type Dim, type ElemType, type NodeOptions } from './onnx-builder'
export { calibrationPath, readCalibration, writeCalibration, CALIBRATION_DIR } from './calibration-store'
export { compileShadow, shadowIo, shadowWeights, SHADOW_STAGES, type ShadowIo, type ShadowSpec, type ShadowStage } from './shadow'
