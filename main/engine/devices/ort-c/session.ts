/**
 * @file Sessions, tensors and I/O binding through the C API. A `NativeTensor` is an `OrtValue` over memory JS
 * owns (an ArrayBuffer, whose bytes never move), so inputs cost nothing to hand over and, with a `Binding`,
 * outputs land in buffers we own: no per-run output copy, and a KV cache can stay where it is between runs.
 */
import { defaultIntraOpThreads } from '../cpu-cores'
import type { GraphOptimizationLevel } from '../ort'
import { nativeView, readCString, type Ptr } from './library'
import type { EpDeviceSelector, OrtCRuntime } from './runtime'

/** Element types the binding moves (ONNX's codes). */
const ELEMENT_TYPES = {
  float32: { code: 1, bytes: 4 },
  uint8: { code: 2, bytes: 1 },
  int8: { code: 3, bytes: 1 },
  int32: { code: 6, bytes: 4 },
  int64: { code: 7, bytes: 8 },
  float16: { code: 10, bytes: 2 }
} as const

/** One of the element types the binding moves. */
export type ElementType = keyof typeof ELEMENT_TYPES

/** The typed array of each element type (float16 as its raw 16-bit patterns). */
export type TypedData = Float32Array | Uint8Array | Int8Array | Int32Array | BigInt64Array | Uint16Array

/** The typed array class of each element type. */
const ARRAYS = {
  float32: Float32Array,
  uint8: Uint8Array,
  int8: Int8Array,
  int32: Int32Array,
  int64: BigInt64Array,
  float16: Uint16Array
} as const satisfies Record<ElementType, unknown>

function typedView(type: ElementType, buffer: ArrayBuffer, count: number): TypedData {
  return new ARRAYS[type](buffer, 0, count)
}

function isElementType(name: string): name is ElementType {
  return Object.hasOwn(ELEMENT_TYPES, name)
}

/** Checks that `data` is the typed array of element type `type` (named `what` in the error). */
export function typedDataOf(type: string, data: unknown, what: string): TypedData {
  if (!isElementType(type)) throw new TypeError(`${what}: the C-API gate does not move ${type} tensors`)
  const array = ARRAYS[type]
  if (!(data instanceof array)) throw new TypeError(`${what}: a ${type} tensor needs a ${array.name}`)
  return data
}

function elementTypeOf(code: number): ElementType {
  const found = Object.keys(ELEMENT_TYPES).filter(isElementType).find((t) => ELEMENT_TYPES[t].code === code)
  if (!found) throw new Error(`the binding does not move ONNX element type ${code}`)
  return found
}

/** Most elements in one tensor (a 2^31-byte ArrayBuffer of float32 is far beyond any single LLM activation). */
export const MAX_TENSOR_ELEMENTS = 2 ** 29

function elementCount(dims: readonly number[]): number {
  let n = 1
  for (const d of dims) {
    if (!Number.isSafeInteger(d) || d < 0) throw new RangeError(`tensor dimensions must be non-negative integers, got [${dims.join(', ')}]`)
    n *= d
  }
  if (n > MAX_TENSOR_ELEMENTS) throw new RangeError(`a tensor of [${dims.join(', ')}] has more than ${MAX_TENSOR_ELEMENTS} elements`)
  return n
}

/** An `OrtValue` over JS-owned memory. Release it when done (the memory itself is garbage-collected). */
export class NativeTensor {
  readonly type: ElementType
  readonly dims: readonly number[]
  /** the tensor's elements: write inputs here, read bound outputs here */
  readonly data: TypedData
  private handle: Ptr
  private readonly runtime: OrtCRuntime

  private constructor(runtime: OrtCRuntime, type: ElementType, dims: readonly number[], data: TypedData, handle: Ptr) {
    this.runtime = runtime
    this.type = type
    this.dims = Object.freeze([...dims])
    this.data = data
    this.handle = handle
  }

  /** A zero-filled tensor, or one over `data` (used in place, not copied; its length must match `dims`). */
  static create(runtime: OrtCRuntime, type: string, dims: readonly number[], data?: TypedData): NativeTensor {
    if (!isElementType(type)) throw new TypeError(`the C-API gate does not move ${type} tensors`)
    const count = elementCount(dims)
    const bytes = count * ELEMENT_TYPES[type].bytes
    const array = data === undefined ? typedView(type, new ArrayBuffer(Math.max(bytes, 1)), count) : typedDataOf(type, data, 'tensor data')
    if (array.length !== count) throw new RangeError(`a [${dims.join(', ')}] tensor needs ${count} elements, got ${array.length}`)
    const out: [Ptr] = [null]
    runtime.lib.check('CreateTensorWithDataAsOrtValue', runtime.cpuMemoryInfo(), array, bytes, dims.map(BigInt), dims.length, ELEMENT_TYPES[type].code, out)
    return new NativeTensor(runtime, type, dims, array, out[0])
  }

  /** The native value (throws after release). */
  get value(): Ptr {
    if (this.handle === null) throw new Error('tensor used after release')
    return this.handle
  }

  release(): void {
    if (this.handle === null) return
    this.runtime.lib.call('ReleaseValue', this.handle)
    this.handle = null
  }
}

/** An output copied out of the runtime: type, shape and elements. */
export interface OutputTensor {
  readonly type: ElementType
  readonly dims: readonly number[]
  readonly data: TypedData
}

/** How to build a session through the C API. */
export interface EpSessionOptions {
  /** the EP device to run on (V2 append); none = ONNX Runtime's default CPU provider */
  readonly device?: EpDeviceSelector
  /** provider options for that device (e.g. OpenVINO's device_type, VitisAI's config_file) */
  readonly providerOptions?: Readonly<Record<string, string>>
  /** threads inside one op; undefined = defaultIntraOpThreads() (the onnxruntime-node gate's default; 0 = ORT's own) */
  readonly intraOpThreads?: number
  readonly optimizationLevel?: GraphOptimizationLevel
  /**
   * false: a node the device cannot take fails session creation instead of running on the CPU provider, so a
   * graph placed on a device really runs there. Default true; ignored without `device`.
   */
  readonly cpuFallback?: boolean
  /** session config entries, passed through as is */
  readonly configEntries?: Readonly<Record<string, string>>
}

const OPTIMIZATION_LEVELS: Readonly<Record<GraphOptimizationLevel, number>> = { disabled: 0, basic: 1, extended: 2, all: 99 }

/** A session made through the C API. */
export class EpSession {
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  private handle: Ptr
  private readonly runtime: OrtCRuntime

  private constructor(runtime: OrtCRuntime, handle: Ptr) {
    this.runtime = runtime
    this.handle = handle
    this.inputNames = Object.freeze(this.names('SessionGetInputCount', 'SessionGetInputName'))
    this.outputNames = Object.freeze(this.names('SessionGetOutputCount', 'SessionGetOutputName'))
  }

  /** Creates a session from an ONNX file path or the model's bytes. */
  static create(runtime: OrtCRuntime, model: string | Uint8Array, options: EpSessionOptions = {}): EpSession {
    const lib = runtime.lib
    const opts: [Ptr] = [null]
    lib.check('CreateSessionOptions', opts)
    try {
      const threads = options.intraOpThreads ?? defaultIntraOpThreads() ?? 0
      if (!Number.isInteger(threads) || threads < 0 || threads > 1024) throw new RangeError(`intraOpThreads must be an integer in [0, 1024], got ${threads}`)
      lib.check('SetIntraOpNumThreads', opts[0], threads)
      lib.check('SetInterOpNumThreads', opts[0], 1)
      lib.check('SetSessionGraphOptimizationLevel', opts[0], OPTIMIZATION_LEVELS[options.optimizationLevel ?? 'all'])
      for (const [k, v] of Object.entries(options.configEntries ?? {})) lib.check('AddSessionConfigEntry', opts[0], k, v)
      if (options.device) {
        if (options.cpuFallback === false) lib.check('AddSessionConfigEntry', opts[0], 'session.disable_cpu_ep_fallback', '1')
        const keys = Object.keys(options.providerOptions ?? {})
        const values = keys.map((k) => options.providerOptions?.[k] ?? '')
        lib.check('SessionOptionsAppendExecutionProvider_V2', opts[0], runtime.env, [runtime.epDeviceHandle(options.device)], 1, keys, values, keys.length)
      }
      const session: [Ptr] = [null]
      if (typeof model === 'string') lib.check('CreateSession', runtime.env, model, opts[0], session)
      else lib.check('CreateSessionFromArray', runtime.env, model, model.byteLength, opts[0], session)
      return new EpSession(runtime, session[0])
    } finally {
      lib.call('ReleaseSessionOptions', opts[0])
    }
  }

  private get live(): Ptr {
    if (this.handle === null) throw new Error('session used after release')
    return this.handle
  }

  private names(countFn: 'SessionGetInputCount' | 'SessionGetOutputCount', nameFn: 'SessionGetInputName' | 'SessionGetOutputName'): string[] {
    const lib = this.runtime.lib
    const count: [number] = [0]
    lib.check(countFn, this.live, count)
    const allocator: [Ptr] = [null]
    lib.check('GetAllocatorWithDefaultOptions', allocator)
    const names: string[] = []
    for (let i = 0; i < Number(count[0]); i++) {
      const name: [Ptr] = [null]
      lib.check(nameFn, this.live, i, allocator[0], name)
      names.push(readCString(name[0]))
      lib.check('AllocatorFree', allocator[0], name[0])
    }
    return names
  }

  /** Runs with `feeds`; the requested outputs (default: all) are copied out of the runtime's memory. */
  run(feeds: Readonly<Record<string, NativeTensor>>, fetches: readonly string[] = this.outputNames): Record<string, OutputTensor> {
    const lib = this.runtime.lib
    const inputNames = Object.keys(feeds)
    for (const name of [...inputNames, ...fetches]) {
      if (!this.inputNames.includes(name) && !this.outputNames.includes(name)) throw new Error(`the session has no input or output named "${name}"`)
    }
    const outputs: Ptr[] = fetches.map(() => null)
    lib.check('Run', this.live, null, inputNames, inputNames.map((n) => feeds[n]?.value ?? null), inputNames.length, [...fetches], fetches.length, outputs)
    const result: Record<string, OutputTensor> = {}
    try {
      fetches.forEach((name, i) => {
        result[name] = copyOut(this.runtime, outputs[i] ?? null)
      })
    } finally {
      for (const v of outputs) if (v !== null) lib.call('ReleaseValue', v)
    }
    return result
  }

  /** An I/O binding: tensors bound once, runs without per-run input or output handling. */
  bind(): Binding {
    const out: [Ptr] = [null]
    this.runtime.lib.check('CreateIoBinding', this.live, out)
    return new Binding(this.runtime, this, out[0])
  }

  /** @internal the native session, for Binding */
  nativeHandle(): Ptr {
    return this.live
  }

  release(): void {
    if (this.handle === null) return
    this.runtime.lib.call('ReleaseSession', this.handle)
    this.handle = null
  }
}

/** Tensors bound to a session's inputs and outputs; `run()` writes the outputs into the bound tensors' memory. */
export class Binding {
  private handle: Ptr
  private readonly runtime: OrtCRuntime
  private readonly session: EpSession

  constructor(runtime: OrtCRuntime, session: EpSession, handle: Ptr) {
    this.runtime = runtime
    this.session = session
    this.handle = handle
  }

  private get live(): Ptr {
    if (this.handle === null) throw new Error('binding used after release')
    return this.handle
  }

  bindInput(name: string, tensor: NativeTensor): void {
    if (!this.session.inputNames.includes(name)) throw new Error(`the session has no input named "${name}"`)
    this.runtime.lib.check('BindInput', this.live, name, tensor.value)
  }

  bindOutput(name: string, tensor: NativeTensor): void {
    if (!this.session.outputNames.includes(name)) throw new Error(`the session has no output named "${name}"`)
    this.runtime.lib.check('BindOutput', this.live, name, tensor.value)
  }

  run(): void {
    this.runtime.lib.check('RunWithBinding', this.session.nativeHandle(), null, this.live)
  }

  release(): void {
    if (this.handle === null) return
    this.runtime.lib.call('ReleaseIoBinding', this.handle)
    this.handle = null
  }
}

/** Copies an output `OrtValue` into JS memory. */
function copyOut(runtime: OrtCRuntime, value: Ptr): OutputTensor {
  const lib = runtime.lib
  const info: [Ptr] = [null]
  lib.check('GetTensorTypeAndShape', value, info)
  try {
    const code: [number] = [0]
    lib.check('GetTensorElementType', info[0], code)
    const rank: [number] = [0]
    lib.check('GetDimensionsCount', info[0], rank)
    const dimsOut = new BigInt64Array(Number(rank[0]))
    lib.check('GetDimensions', info[0], dimsOut, dimsOut.length)
    const dims = [...dimsOut].map(Number)
    const type = elementTypeOf(code[0])
    const count = elementCount(dims)
    const bytes = count * ELEMENT_TYPES[type].bytes
    const ptr: [Ptr] = [null]
    lib.check('GetTensorMutableData', value, ptr)
    const copy = bytes === 0 ? new ArrayBuffer(0) : nativeView(ptr[0], bytes).slice(0)
    return { type, dims, data: typedView(type, copy, count) }
  } finally {
    lib.call('ReleaseTensorTypeAndShapeInfo', info[0])
  }
}
