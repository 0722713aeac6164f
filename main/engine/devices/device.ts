/**
 * @file What the engine knows about one compute device: plain JSON (shown in the CLI and the UI, handed to
 * the planner), plus the per-EP probe result it is built from.
 */

/** The kind of hardware behind a device; 'software-gpu' is a GPU API implemented on the CPU (e.g. Mesa lavapipe). */
export const DEVICE_KINDS = Object.freeze(['cpu', 'igpu', 'dgpu', 'npu', 'software-gpu'] as const)

/** One of DEVICE_KINDS. */
export type DeviceKind = (typeof DEVICE_KINDS)[number]

/**
 * ready: probed (or, without probing, the always-present CPU) and usable; failed: the EP is present but its
 * probe failed (reason says how); unavailable: this build or OS cannot load the EP at all; unprobed: present,
 * but `discoverDevices` was asked not to probe, so nothing is known yet (not used by the planner).
 */
export const DEVICE_STATUSES = Object.freeze(['ready', 'failed', 'unavailable', 'unprobed'] as const)

/** One of DEVICE_STATUSES. */
export type DeviceStatus = (typeof DEVICE_STATUSES)[number]

/** Contrib/LLM ops the engine's graphs may use; each device reports which of them load with CPU fallback off. */
export const CONTRIB_OPS = Object.freeze([
  'MatMulNBits',
  'GroupQueryAttention',
  'RotaryEmbedding',
  'SimplifiedLayerNormalization',
  'SkipSimplifiedLayerNormalization'
] as const)

/** One of CONTRIB_OPS. */
export type ContribOp = (typeof CONTRIB_OPS)[number]

/** What graphs a device accepts. */
export interface DeviceContract {
  /** true when the EP needs every dimension fixed at session creation (no dimParam) */
  readonly staticShapesOnly: boolean
  /** true when the EP only takes quantized (QDQ int8/int16) graphs */
  readonly int8Only: boolean
  /** largest single tensor the device takes, in bytes; null = limited by memory only */
  readonly maxTensorBytes: number | null
  /** the CONTRIB_OPS that loaded and matched JS on this device with CPU fallback disabled */
  readonly supportsContribOps: readonly ContribOp[]
}

/** One probe graph's outcome. */
export interface ProbeCheck {
  /** 'MatMul+Add' or a CONTRIB_OPS name */
  readonly name: string
  readonly ok: boolean
  /** largest |ORT − JS| over the outputs; null when the session did not load or run */
  readonly maxAbsError: number | null
  /** session create + runs, ms */
  readonly ms: number
  /** ORT's message (first line kept short) when not ok */
  readonly error: string | null
}

/** Everything one EP probe found out (computed in a probe child process, validated on return). */
export interface EpProbeResult {
  readonly ep: string
  /** true when the basic MatMul+Add graph loaded without CPU fallback and matched JS */
  readonly ok: boolean
  /** why the EP is not usable (ORT's message), null when ok */
  readonly reason: string | null
  /** true when the basic graph only worked with every dimension fixed */
  readonly staticShapesOnly: boolean
  readonly checks: readonly ProbeCheck[]
  /** wall time of the whole probe in the child, ms */
  readonly probeMs: number
}

/** A compute device as the engine sees it (plain JSON). */
export interface DeviceInfo {
  /** stable id: 'cpu', 'cpu-2', 'webgpu-0', ... */
  readonly id: string
  /** human name, e.g. "CPU (AMD EPYC, 2 cores)" or "Software GPU (Mesa lavapipe via WebGPU)" */
  readonly name: string
  /** ONNX Runtime execution provider name */
  readonly ep: string
  readonly kind: DeviceKind
  /** true when the device is not separate hardware: a software GPU, or an extra CPU worker on the same cores */
  readonly software: boolean
  /** ids of devices that compete for the same physical compute (lavapipe and a second CPU worker share the CPU) */
  readonly sharesComputeWith: readonly string[]
  readonly contract: DeviceContract
  readonly status: DeviceStatus
  /** why the device is not ready (ORT's message, a crash, a missing library); null when ready */
  readonly reason: string | null
  /** how the name and kind were determined (adapter info, Vulkan ICD files, os.cpus()) */
  readonly detection: string
  /** probe wall time in ms; null when not probed */
  readonly probeMs: number | null
  /** per-graph probe outcomes (empty when not probed) */
  readonly checks: readonly ProbeCheck[]
  /** options every session on this device passes its provider (a provider library's, as the user gave them) */
  readonly providerOptions?: Readonly<Record<string, string>>
}
