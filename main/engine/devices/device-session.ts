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
