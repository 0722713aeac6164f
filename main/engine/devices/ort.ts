/**
 * @file The one gate to onnxruntime-node: one way to make a session (on an execution provider named in the
 * EP catalog), tensors, backend discovery. Everything else in the engine talks to ONNX Runtime through
 * these thin typed wrappers, so swapping or upgrading the runtime touches one file.
 */
import * as ort from 'onnxruntime-node'
import { EP_CATALOG, isKnownEp } from './catalog'
import { defaultIntraOpThreads } from './cpu-cores'

/** ORT's graph optimization levels. */
export type GraphOptimizationLevel = 'disabled' | 'basic' | 'extended' | 'all'

/**
 * ORT session config key that makes session creation fail ("...assigned to the default CPU EP, but fallback
 * to CPU EP has been explicitly disabled by the user.") instead of quietly placing unsupported nodes on the CPU.
 */
export const DISABLE_CPU_EP_FALLBACK_KEY = 'session.disable_cpu_ep_fallback'

/** Session config key for intra-op thread spinning ('0' = sleep when idle). */
export const ALLOW_SPINNING_KEY = 'session.intra_op.allow_spinning'

/** How to build a session. */
export interface SessionConfig {
  /** execution provider, one of the catalog's names (catalog.ts: the one EP table); anything else is refused */
  readonly ep: string
  /**
   * false: nodes the EP cannot take fail session creation instead of running on the CPU EP (so a graph
   * placed on a device really runs there). Default true. Ignored for ep 'cpu': ORT applies the switch to
   * the CPU EP itself too, and then refuses every graph.
   */
  readonly cpuFallback?: boolean
  /** threads inside one op (ORT intra-op pool); undefined = defaultIntraOpThreads() (the physical cores) */
  readonly intraOpThreads?: number
  /** threads across independent ops; default 1 (our decoder graphs run sequentially) */
  readonly interOpThreads?: number
  readonly optimizationLevel?: GraphOptimizationLevel
  /**
   * false: idle intra-op threads sleep instead of spinning after a run. Spinning wins for one session that
   * owns the cores; with several devices' sessions on the same cores it steals the time another needs.
   */
  readonly allowSpinning?: boolean
  /** when set, ORT writes a per-node JSON profile whose path starts with this prefix (see `endProfiling`) */
  readonly profileFilePrefix?: string
  /** ORT session config entries ("key" -> "value", e.g. "session.disable_prepacking"), passed through as is */
  readonly configEntries?: Readonly<Record<string, string>>
  /** options for a provider-library device's provider (DeviceInfo.providerOptions); refused for catalog EPs */
  readonly providerOptions?: Readonly<Record<string, string>>
}

/** A tensor handed to or returned by a session (ORT's own type, re-exported so callers need not import ORT). */
export type OrtTensor = ort.Tensor

/** A live session: run, inspect I/O names, release. */
export interface OrtSession {
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  /** Runs synchronously on the calling thread inside ORT (the promise resolves after the work is done). */
  run(feeds: Readonly<Record<string, OrtTensor>>, fetches?: readonly string[]): Promise<Record<string, OrtTensor>>
  /**
   * Runs with `outputs` written into the caller's tensors (shapes must match), which are the fetches. Feeds and
   * outputs passed again as the same tensor objects are not handed over again where the gate keeps them bound
   * (the C-API gate's I/O binding), so a KV cache passed as the same tensors stays where it is between runs.
   */
  runInto(feeds: Readonly<Record<string, OrtTensor>>, outputs: Readonly<Record<string, OrtTensor>>): Promise<void>
  /** Flushes the profile of a session created with `profileFilePrefix` (no-op otherwise). */
  endProfiling(): void
  release(): Promise<void>
}

/** One backend as the binding reports it. */
export interface BackendInfo {
  readonly name: string
  /** true when the backend's native library ships inside the npm package */
  readonly bundled: boolean
}

/** Backends this onnxruntime-node binding can load (e.g. cpu, webgpu; cuda and tensorrt unbundled). */
export function listSupportedBackends(): BackendInfo[] {
  return ort.listSupportedBackends().map((b) => ({ name: b.name, bundled: b.bundled }))
}

/** ONNX Runtime version string, e.g. "1.30.0". */
export function ortVersion(): string {
  return ort.env.versions.node ?? ort.env.versions.common
}

function checkThreads(label: string, n: number | undefined): void {
  if (n !== undefined && (!Number.isInteger(n) || n < 0 || n > 1024)) throw new RangeError(`${label} must be an integer in [0, 1024], got ${n}`)
}

/** Copies `from` (an output) into `to` (a caller's tensor of the same type and size). */
function copyInto(to: OrtTensor, from: OrtTensor | undefined, name: string): void {
  const src = from?.data
  const dst = to.data
  if (from === undefined || from.type !== to.type || !ArrayBuffer.isView(src) || !ArrayBuffer.isView(dst) || src.byteLength !== dst.byteLength) {
    throw new Error(`output ${name}: the session returned ${from === undefined ? 'nothing' : `a ${from.type} [${from.dims.join(', ')}]`}, expected ${to.type} [${to.dims.join(', ')}]`)
  }
  new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(new Uint8Array(src.buffer, src.byteOffset, src.byteLength))
}

/** Our handle over an ORT session: run refuses after release; release is idempotent. */
function wrapSession(session: ort.InferenceSession, profiling: boolean): OrtSession {
  let released = false
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    async run(feeds, fetches) {
      if (released) throw new Error('session already released')
      return fetches ? session.run(feeds, [...fetches]) : session.run(feeds)
    },
    async runInto(feeds, outputs) {
      if (released) throw new Error('session already released')
      // onnxruntime-node can write pre-allocated fetches in place, but then also returns copies: decode measured
      // 1.02–1.07× the time of a plain run plus this copy (bench/gates.ts, 110M F32/Q8_0/Q4_0/Q4_K_M)
      const out = await session.run(feeds, Object.keys(outputs))
      for (const [name, t] of Object.entries(outputs)) copyInto(t, out[name], name)
    },
    endProfiling() {
      if (!released && profiling) session.endProfiling()
    },
    async release() {
      if (released) return
      released = true
      await session.release()
    }
  }
}

function sessionOptions(config: SessionConfig): ort.InferenceSession.SessionOptions {
  if (!isKnownEp(config.ep)) throw new Error(`unknown execution provider '${config.ep}'; valid: ${Object.keys(EP_CATALOG).join(', ')}`)
  if (Object.keys(config.providerOptions ?? {}).length > 0) throw new Error(`provider options are for provider-library devices; ${config.ep} takes none here`)
  checkThreads('intraOpThreads', config.intraOpThreads)
  checkThreads('interOpThreads', config.interOpThreads)
  const fallbackOff = config.cpuFallback === false && config.ep !== 'cpu'
  const entries: Record<string, string> = {
    ...config.configEntries,
    ...(fallbackOff ? { [DISABLE_CPU_EP_FALLBACK_KEY]: '1' } : {}),
    ...(config.allowSpinning === false ? { [ALLOW_SPINNING_KEY]: '0' } : {})
  }
  const intraOpThreads = config.intraOpThreads ?? defaultIntraOpThreads()
  return {
    executionProviders: [config.ep],
    ...(intraOpThreads !== undefined ? { intraOpNumThreads: intraOpThreads } : {}),
    interOpNumThreads: config.interOpThreads ?? 1,
    graphOptimizationLevel: config.optimizationLevel ?? 'all',
    executionMode: 'sequential',
    ...(config.profileFilePrefix !== undefined ? { enableProfiling: true, profileFilePrefix: config.profileFilePrefix } : {}),
    // the binding turns `extra`'s string values into session config entries under their (dotted) keys
    ...(Object.keys(entries).length > 0 ? { extra: entries } : {})
  }
}

/** Creates a session from an ONNX file path or from model bytes on `config.ep`. The one way to make a session; pair with `release()`. */
export async function createSession(model: string | Uint8Array, config: SessionConfig): Promise<OrtSession> {
  const options = sessionOptions(config)
  const session = typeof model === 'string' ? await ort.InferenceSession.create(model, options) : await ort.InferenceSession.create(model, options)
  return wrapSession(session, config.profileFilePrefix !== undefined)
}

/** A float32 tensor over `data` (no copy; `data` may be a subarray view, never SharedArrayBuffer-backed). */
export function float32Tensor(data: Float32Array, dims: readonly number[]): OrtTensor {
  return new ort.Tensor('float32', data, dims)
}

/** An int64 tensor over `data` (no copy). */
export function int64Tensor(data: BigInt64Array, dims: readonly number[]): OrtTensor {
  return new ort.Tensor('int64', data, dims)
}

/** Element types that cross between the two gates (the C-API binding's `ElementType`s). */
export type GateElementType = 'float32' | 'uint8' | 'int8' | 'int32' | 'int64' | 'float16'

/** A tensor of one of the gate element types over `data` (no copy; float16 as raw 16-bit patterns). */
export function gateTensor(type: GateElementType, data: Float32Array | Uint8Array | Int8Array | Int32Array | BigInt64Array | Uint16Array, dims: readonly number[]): OrtTensor {
  if (type === 'float32' && data instanceof Float32Array) return new ort.Tensor('float32', data, dims)
  if (type === 'int64' && data instanceof BigInt64Array) return new ort.Tensor('int64', data, dims)
  if (type === 'int32' && data instanceof Int32Array) return new ort.Tensor('int32', data, dims)
  if (type === 'uint8' && data instanceof Uint8Array) return new ort.Tensor('uint8', data, dims)
  if (type === 'int8' && data instanceof Int8Array) return new ort.Tensor('int8', data, dims)
  if (type === 'float16' && data instanceof Uint16Array) return new ort.Tensor('float16', data, dims)
  throw new TypeError(`a ${type} tensor cannot hold a ${data.constructor.name}`)
}

/** The float32 contents of an output tensor; throws when the session returned another type. */
export function tensorFloat32Data(t: OrtTensor, what: string): Float32Array {
  const d = t.data
  if (t.type !== 'float32' || !(d instanceof Float32Array)) throw new TypeError(`${what}: expected a float32 tensor, got ${t.type}`)
  return d
}
