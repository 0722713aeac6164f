/**
 * @file A C-API session behind the engine's `OrtSession` interface, so everything written against the
 * onnxruntime-node gate (the single-session engine, device workers, probes) runs unchanged on an EP device a
 * plugin provider brings (an NPU). Feeds are wrapped, not copied; `run`'s outputs are copied out once, as
 * onnxruntime-node does; `runInto` keeps one I/O binding, so outputs land in the caller's buffers and a tensor
 * passed again (a KV cache between tokens) stays bound: a run then hands nothing over.
 */
import { gateTensor, type OrtSession, type OrtTensor } from '../ort'
import type { OrtCRuntime } from './runtime'
import { EpSession, NativeTensor, typedDataOf, type Binding, type EpSessionOptions } from './session'

/** The tensors bound to one side of a binding, by name: the caller's tensor and our value over its memory. */
type BoundSide = Map<string, { readonly source: OrtTensor; readonly native: NativeTensor }>

function nativeOf(runtime: OrtCRuntime, t: OrtTensor, name: string): NativeTensor {
  return NativeTensor.create(runtime, t.type, t.dims, typedDataOf(t.type, t.data, name))
}

/** Binds what changed since the last run (a new tensor object under a name); the binding keeps its own reference. */
function rebind(runtime: OrtCRuntime, side: BoundSide, tensors: Readonly<Record<string, OrtTensor>>, bind: (name: string, t: NativeTensor) => void): void {
  for (const [name, t] of Object.entries(tensors)) {
    const current = side.get(name)
    if (current?.source === t) continue
    const native = nativeOf(runtime, t, name)
    try {
      bind(name, native)
    } catch (e) {
      native.release()
      throw e
    }
    current?.native.release()
    side.set(name, { source: t, native })
  }
}

/** Opens `model` through the C API with `options` and returns it as an `OrtSession`. */
export function createEpDeviceSession(runtime: OrtCRuntime, model: string | Uint8Array, options: EpSessionOptions): OrtSession {
  const session = EpSession.create(runtime, model, options)
  let released = false
  let binding: Binding | null = null
  const boundInputs: BoundSide = new Map()
  const boundOutputs: BoundSide = new Map()
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    async run(feeds: Readonly<Record<string, OrtTensor>>, fetches?: readonly string[]): Promise<Record<string, OrtTensor>> {
      if (released) throw new Error('session already released')
      const native: Record<string, NativeTensor> = {}
      try {
        for (const [name, t] of Object.entries(feeds)) native[name] = nativeOf(runtime, t, name)
        const out = session.run(native, fetches ?? session.outputNames)
        return Object.fromEntries(Object.entries(out).map(([name, o]) => [name, gateTensor(o.type, o.data, o.dims)]))
      } finally {
        for (const t of Object.values(native)) t.release()
      }
    },
    async runInto(feeds, outputs) {
      if (released) throw new Error('session already released')
      const b = (binding ??= session.bind())
      rebind(runtime, boundInputs, feeds, (name, t) => b.bindInput(name, t))
      rebind(runtime, boundOutputs, outputs, (name, t) => b.bindOutput(name, t))
      b.run()
    },
    endProfiling() {},
    async release() {
      if (released) return
      released = true
      binding?.release()
      for (const side of [boundInputs, boundOutputs]) for (const { native } of side.values()) native.release()
      session.release()
    }
  }
}
