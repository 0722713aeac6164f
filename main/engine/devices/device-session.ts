/**
 * @file One way for the runtime to open a session on any device: EPs in the catalog go through
 * onnxruntime-node (ort.ts), every other EP name is an EP device a registered provider library brought (an
 * NPU), opened through the C-API gate with the same options and returned behind the same `OrtSession` — a cached
 * graph file through the provider's compiled-model cache (ep-context-cache.ts).
 */
import { isKnownEp } from './catalog'
import { ALLOW_SPINNING_KEY, createSession, type OrtSession, type SessionConfig } from './ort'
import { openThroughEpContext } from './ep-context-cache'
import { createEpDeviceSession } from './ort-c/as-ort-session'
import { OrtCRuntime } from './ort-c/runtime'
import { VIRTUAL_NPU_EP, virtualNpuStats } from './virtual-npu'

/** Opens `model` on `config.ep`, through whichever gate reaches it. */
export async function createDeviceSession(model: string | Uint8Array, config: SessionConfig): Promise<OrtSession> {
  if (isKnownEp(config.ep)) return createSession(model, config)
  if (config.profileFilePrefix !== undefined) throw new Error(`profiling is not available on ${config.ep} (a provider-library device)`)
  const runtime = OrtCRuntime.open()
  try {
    return openOnEpDevice(runtime, model, config)
  } catch (e) {
    const refusal = providerRefusal(runtime, config.ep)
    if (refusal === null || !(e instanceof Error)) throw e
    throw new Error(`${e.message} (${refusal})`, { cause: e })
  }
}

/**
 * The CPU's single session (the default engine): through the C API with I/O binding, because a step then hands
 * nothing over (the KV cache and the outputs stay bound). On the same graphs (bench/gates.ts: the bench's 110M
 * F32, Q8_0, Q4_0 and Q4_K_M, 2 threads, 7–9 reps in rotating order, three quiet runs on 2026-12-02) its decode
 * took 0.80–1.02× the time of onnxruntime-node's (median 0.94×; faster in 11 of 12) and a 16-token prefill
 * 0.58–1.22× (median 0.82×). A profiled session stays on onnxruntime-node (the binding has no profiler).
 */
export async function createCpuSession(model: string | Uint8Array, config: Omit<SessionConfig, 'ep'>): Promise<OrtSession> {
  if (config.profileFilePrefix !== undefined) return createSession(model, { ...config, ep: 'cpu' })
  if (config.interOpThreads !== undefined && config.interOpThreads !== 1) throw new RangeError('the CPU session runs its ops in sequence (interOpThreads 1)')
  return createEpDeviceSession(OrtCRuntime.open(), model, {
    device: { epName: CPU_EP_DEVICE },
    intraOpThreads: config.intraOpThreads,
    optimizationLevel: config.optimizationLevel,
    configEntries: { ...config.configEntries, ...(config.allowSpinning === false ? { [ALLOW_SPINNING_KEY]: '0' } : {}) }
  })
}

/** ONNX Runtime's CPU provider as an EP device. */
const CPU_EP_DEVICE = 'CPUExecutionProvider'

/**
 * What the provider said about the node it refused, when it says: ONNX Runtime's own error only reports that
 * some node fell to the CPU. Our virtual NPU keeps its last refusal; vendor providers log theirs.
 */
function providerRefusal(runtime: OrtCRuntime, ep: string): string | null {
  if (ep !== VIRTUAL_NPU_EP) return null
  const path = runtime.epDevices().find((d) => d.epName === ep)?.epMetadata.library_path
  const last = path === undefined ? '' : virtualNpuStats(path).lastRefusal
  return last === '' ? null : `the virtual NPU ${last}`
}

function openOnEpDevice(runtime: OrtCRuntime, model: string | Uint8Array, config: SessionConfig): OrtSession {
  const configEntries = { ...config.configEntries, ...(config.allowSpinning === false ? { [ALLOW_SPINNING_KEY]: '0' } : {}) }
  const open = (m: string | Uint8Array, extra: Readonly<Record<string, string>>): OrtSession =>
    createEpDeviceSession(runtime, m, {
      device: { epName: config.ep },
      cpuFallback: config.cpuFallback,
      intraOpThreads: config.intraOpThreads,
      optimizationLevel: config.optimizationLevel,
      providerOptions: config.providerOptions,
      configEntries: { ...configEntries, ...extra }
    })
  const device = runtime.epDevices().find((d) => d.epName === config.ep)
  if (typeof model !== 'string' || device === undefined) return open(model, {})
  return openThroughEpContext(model, { device, configEntries, providerOptions: config.providerOptions ?? {} }, open).session
}
