/** @file Public surface of the device layer: the onnxruntime-node gate and the C-API gate (plugin EPs, EP devices, bound buffers). */
export {
  createSession,
  float32Tensor,
  int64Tensor,
  tensorFloat32Data,
  listSupportedBackends,
  ortVersion,
  type SessionConfig,
  type GraphOptimizationLevel,
  type OrtSession,
  type OrtTensor,
  type BackendInfo
} from './ort'
export { DISABLE_CPU_EP_FALLBACK_KEY, gateTensor, type GateElementType } from './ort'
export { defaultIntraOpThreads } from './cpu-cores'
export {
  CONTRIB_OPS,
  DEVICE_KINDS,
  DEVICE_STATUSES,
  type ContribOp,
  type DeviceContract,
  type DeviceInfo,
  type DeviceKind,
  type DeviceStatus,
  type EpProbeResult,
  type ProbeCheck
} from './device'
export { EP_CATALOG, WEBGPU_MAX_TENSOR_BYTES, isKnownEp, platformEps, type EpFacts, type KnownEp } from './catalog'
export { describeCpu, guessWebGpuAdapter, listGpuNodes, listVulkanIcds, type CpuDescription, type GpuGuess, type VulkanIcd } from './host'
export { contribOpCases, matmulAddCase, PROBE_TOLERANCE, type ProbeCase, type ProbeRun } from './probe-cases'
export { probeEpInProcess, runProbeCase, probeTargetEp, type EpDeviceTarget, type ProbeTarget, type ProviderLibrary } from './probe-run'
export { clearProbeCache, probeEp, DEFAULT_PROBE_TIMEOUT_MS, MAX_PROBE_TIMEOUT_MS, type ProbeOptions } from './probe'
export { parseEpProbeResult, parseProbeMessage, readProbeCheck, ProbeProtocolError, type ProbeMessage } from './probe-protocol'
export { readDeviceList, MAX_LISTED_DEVICES, MAX_DEVICE_ID_LENGTH, MAX_PROVIDER_OPTIONS } from './device-list'
export { CPU_DEVICE_ID, discoverDevices, SECOND_CPU_ID, type DiscoverOptions } from './discover'
export { OrtCLibrary, OrtCApiError, ORT_C_API_VERSION, ORT_C_SLOTS, bundledOrtLibraryPath, type OrtCFunction } from './ort-c/library'
export { OrtCRuntime, HARDWARE_TYPES, checkRegistrationName, MAX_REGISTRATION_NAME_LENGTH, type EpDeviceInfo, type EpDeviceSelector, type HardwareType, type RegisteredLibrary } from './ort-c/runtime'
export { EpSession, NativeTensor, Binding, MAX_TENSOR_ELEMENTS, type ElementType, type EpSessionOptions, type OutputTensor, type TypedData } from './ort-c/session'
export { buildVirtualNpu, registerVirtualNpu, virtualNpuSourceDir, virtualNpuStats, VIRTUAL_NPU_EP, VIRTUAL_NPU_LABEL, VIRTUAL_NPU_REGISTRATION, type VirtualNpuBuildOptions, type VirtualNpuStats } from './virtual-npu'
export { discoverAllDevices, discoverEpDevices, type EpDeviceOptions, type ProviderLibraryStatus, type ProviderOptions } from './ep-devices'
export { createEpDeviceSession } from './ort-c/as-ort-session'
export { createCpuSession, createDeviceSession } from './device-session'
export { openThroughEpContext, epContextEntry, EP_CONTEXT_DIR, type EpContextIdentity, type EpContextOutcome } from './ep-context-cache'
