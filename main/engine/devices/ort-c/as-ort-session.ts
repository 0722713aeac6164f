/**
 * @file A C-API session behind the engine's `OrtSession` interface, so everything written against the
 * onnxruntime-node gate (the single-session engine, device workers, probes) runs unchanged on an EP device a
 * plugin provider brings (an NPU). Feeds are wrapped, not copied; outputs are copied out once, as
 * onnxruntime-node does.
 */
import { gateTensor, type OrtSession, type OrtTensor } from '../ort'
import type { OrtCRuntime } from './runtime'
import { EpSession, NativeTensor, typedDataOf, type EpSessionOptions } from './session'

/** Opens `model` through the C API with `options` and returns it as an `OrtSession`. */
export function createEpDeviceSession(runtime: OrtCRuntime, model: string | Uint8Array, options: EpSessionOptions): OrtSession {
  const session = EpSession.create(runtime, model, options)
  let released = false
  return {
    inputNames: session.inputNames,
    outputNames: session.outputNames,
    async run(feeds: Readonly<Record<string, OrtTensor>>, fetches?: readonly string[]): Promise<Record<string, OrtTensor>> {
      if (released) throw new Error('session already released')
      const native: Record<string, NativeTensor> = {}
      try {
        for (const [name, t] of Object.entries(feeds)) native[name] = NativeTensor.create(runtime, t.type, t.dims, typedDataOf(t.type, t.data, name))
        const out = session.run(native, fetches ?? session.outputNames)
        return Object.fromEntries(Object.entries(out).map(([name, o]) => [name, gateTensor(o.type, o.data, o.dims)]))
      } finally {
        for (const t of Object.values(native)) t.release()
      }
    },
    endProfiling() {},
    async release() {
      if (released) return
      released = true
      session.release()
    }
  }
}
