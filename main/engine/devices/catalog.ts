/**
 * @file Frozen per-EP facts: on which OS and CPU architecture each ONNX Runtime execution provider can exist
 * (as transformers.js keeps it, next to its device table), what hardware it usually means, and its graph
 * contract before probing. Probing refines the contract (staticShapesOnly, int8Only, contrib ops) with what
 * was actually seen; the facts here are what we assume for EPs that cannot be probed on this machine.
 *
 *   EP        | win32       | linux      | darwin | hardware
 *   ----------+-------------+------------+--------+--------------------------------------------
 *   cpu       | x           | x          | x      | the CPU
 *   webgpu    | x           | x          | x      | any GPU through Dawn (D3D12 / Vulkan / Metal)
 *   dml       | x           |            |        | any D3D12 GPU (DirectML)
 *   coreml    |             |            | x      | Apple Neural Engine / GPU / CPU
 *   qnn       | arm64       |            |        | Snapdragon Hexagon NPU
 *   cuda      | x64         | x64        |        | NVIDIA GPU (libraries not bundled in the npm package)
 *   tensorrt  | x64         | x64        |        | NVIDIA GPU (libraries not bundled in the npm package)
 */
import { CONTRIB_OPS, type ContribOp, type DeviceKind } from './device'

/** Execution providers the engine knows facts about. */
export type KnownEp = 'cpu' | 'webgpu' | 'dml' | 'coreml' | 'qnn' | 'cuda' | 'tensorrt'

/** Facts about one EP, before any probe. */
export interface EpFacts {
  /** `process.platform` values where the EP can exist */
  readonly platforms: readonly NodeJS.Platform[]
  /** `process.arch` values where it can exist; empty = any */
  readonly archs: readonly string[]
  /** human label of the EP itself */
  readonly label: string
  /** the usual hardware kind (webgpu is refined from the host's GPU, see host.ts) */
  readonly kind: DeviceKind
  readonly staticShapesOnly: boolean
  readonly int8Only: boolean
  /** bytes; null = memory only */
  readonly maxTensorBytes: number | null
  /** contrib ops assumed before a probe: all of them on the CPU EP (ORT's reference kernels), none elsewhere */
  readonly contribOps: readonly ContribOp[]
}

/**
 * WebGPU's default maxStorageBufferBindingSize (128 MiB). ORT's WebGPU EP splits bigger tensors into
 * bindings of this size, but one shader may hold only maxStorageBuffersPerShaderStage (16 on lavapipe) of
 * them: a single 1.1 GiB Add failed here ("Too many storage buffers in shader. Current: 18, Max is 16").
 * Graphs we place on WebGPU keep each tensor within one binding.
 */
export const WEBGPU_MAX_TENSOR_BYTES = 128 * 1024 * 1024

/** Per-EP facts, frozen. */
export const EP_CATALOG: Readonly<Record<KnownEp, EpFacts>> = Object.freeze({
  cpu: { platforms: ['win32', 'linux', 'darwin'], archs: [], label: 'CPU', kind: 'cpu', staticShapesOnly: false, int8Only: false, maxTensorBytes: null, contribOps: CONTRIB_OPS },
  webgpu: { platforms: ['win32', 'linux', 'darwin'], archs: [], label: 'WebGPU', kind: 'igpu', staticShapesOnly: false, int8Only: false, maxTensorBytes: WEBGPU_MAX_TENSOR_BYTES, contribOps: [] },
  dml: { platforms: ['win32'], archs: [], label: 'DirectML', kind: 'igpu', staticShapesOnly: false, int8Only: false, maxTensorBytes: null, contribOps: [] },
  // CoreML may place work on the ANE, GPU or CPU; the ANE wants fixed shapes
  coreml: { platforms: ['darwin'], archs: [], label: 'Core ML', kind: 'npu', staticShapesOnly: true, int8Only: false, maxTensorBytes: null, contribOps: [] },
  // the Hexagon HTP backend runs quantized (QDQ) graphs with fixed shapes
  qnn: { platforms: ['win32'], archs: ['arm64'], label: 'Qualcomm QNN', kind: 'npu', staticShapesOnly: true, int8Only: true, maxTensorBytes: null, contribOps: [] },
  cuda: { platforms: ['win32', 'linux'], archs: ['x64'], label: 'CUDA', kind: 'dgpu', staticShapesOnly: false, int8Only: false, maxTensorBytes: null, contribOps: [] },
  tensorrt: { platforms: ['win32', 'linux'], archs: ['x64'], label: 'TensorRT', kind: 'dgpu', staticShapesOnly: false, int8Only: false, maxTensorBytes: null, contribOps: [] }
})

/** Type guard: an EP name the catalog knows. */
export function isKnownEp(name: string): name is KnownEp {
  return Object.hasOwn(EP_CATALOG, name)
}

/** EPs that can exist on this OS and CPU architecture, in catalog order (cpu first). */
export function platformEps(platform: NodeJS.Platform = process.platform, arch: string = process.arch): KnownEp[] {
  const eps: KnownEp[] = []
  for (const [name, facts] of Object.entries(EP_CATALOG)) {
    if (!isKnownEp(name)) continue
    if (facts.platforms.includes(platform) && (facts.archs.length === 0 || facts.archs.includes(arch))) eps.push(name)
  }
  return eps
}
