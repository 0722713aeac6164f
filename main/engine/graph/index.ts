/** @file Public surface of the graph compiler: op groups, segment specs, compilation, the on-disk graph cache. */
export { compileModel, compileSegment, checkCompilable, GRAPH_COMPILER_VERSION, type CompilableModel } from './compile'
export type { GraphOptions } from './emit-context'
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
export { resolveGraphCacheDir, graphCacheKey, cachedGraphPath, cachedGraphExists, writeGraphAtomic } from './cache'
