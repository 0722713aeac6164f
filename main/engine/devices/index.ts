/** @file Public surface of the device layer (today: the onnxruntime-node gate). */
export {
  createSession,
  float32Tensor,
  int64Tensor,
  tensorFloat32Data,
  tensorDims,
  listSupportedBackends,
  ortVersion,
  DEVICE_TO_EXECUTION_PROVIDER,
  SESSION_DEVICES,
  type DeviceName,
  type SessionConfig,
  type GraphOptimizationLevel,
  type OrtSession,
  type OrtTensor,
  type BackendInfo
} from './ort'
