/**
 * @file EP devices become Tandem devices: the provider libraries a user named (and the virtual NPU, on request)
 * are registered with the process's ONNX Runtime through the C API, and every EP device they bring is listed as
 * a DeviceInfo — hardware type, vendor, EP name and metadata, and a contract learnt by probing it in a child
 * process (a vendor library that crashes ends only that child). A library that fails to load is reported with
 * the runtime's reason.
 */
import { CONTRIB_OPS, type DeviceInfo, type DeviceKind, type EpProbeResult } from './device'
import { discoverDevices } from './discover'
import { BUILT_IN_EPS, OrtCRuntime, type EpDeviceInfo } from './ort-c/runtime'
import { probeEp } from './probe'
import type { ProviderLibrary } from './probe-run'
import { registerVirtualNpu, VIRTUAL_NPU_EP, VIRTUAL_NPU_LABEL, VIRTUAL_NPU_REGISTRATION } from './virtual-npu'

/** Options for discoverEpDevices. */
export interface EpDeviceOptions {
  /** provider libraries to register (name and file) */
  readonly providerLibraries?: readonly ProviderLibrary[]
  /** build (when needed) and register the virtual NPU test provider */
  readonly virtualNpu?: boolean
  /** provider options for sessions on the virtual NPU (its throughput model: launch_us, gops, compile_ms; ops; threads) */
  readonly virtualNpuOptions?: Readonly<Record<string, string>>
  /** probe each EP device (default true) */
  readonly probe?: boolean
  /** per-device probe timeout in ms */
  readonly timeoutMs?: number
  /** progress lines (e.g. "building the virtual NPU …") */
  readonly log?: (line: string) => void
}

/** A provider library's registration outcome. */
export interface ProviderLibraryStatus extends ProviderLibrary {
  readonly ok: boolean
  /** why it did not register (the runtime's message), null when it did */
  readonly reason: string | null
  /** EP names it brought */
  readonly eps: readonly string[]
}

function kindOf(d: EpDeviceInfo): DeviceKind {
  if (d.hardwareType === 'npu') return 'npu'
  if (d.hardwareType === 'cpu') return 'cpu'
  return d.hardwareMetadata.DiscreteGraphics === '1' ? 'dgpu' : 'igpu'
}

/** "npu-tandemvirtualnpu-0": kind, EP and the device's index among that EP's devices. */
function idOf(d: EpDeviceInfo, index: number): string {
  return `${kindOf(d)}-${d.epName.replace(/ExecutionProvider$/, '').toLowerCase().replace(/[^a-z0-9]+/g, '')}-${index}`
}

function optionsOf(lib: ProviderLibraryStatus | undefined): { providerOptions?: Readonly<Record<string, string>> } {
  return lib?.options === undefined || Object.keys(lib.options).length === 0 ? {} : { providerOptions: { ...lib.options } }
}

/** Registers the requested libraries and lists (and probes) the EP devices they bring. */
export async function discoverEpDevices(options: EpDeviceOptions): Promise<{ devices: DeviceInfo[]; libraries: ProviderLibraryStatus[] }> {
  const runtime = OrtCRuntime.open()
  const libraries: ProviderLibraryStatus[] = []
  if (options.virtualNpu) {
    try {
      const reg = await registerVirtualNpu(runtime, { onBuild: options.log })
      libraries.push({ name: reg.name, path: reg.path, options: options.virtualNpuOptions, ok: true, reason: null, eps: reg.eps })
    } catch (e) {
      libraries.push({ name: VIRTUAL_NPU_REGISTRATION, path: '', ok: false, reason: e instanceof Error ? e.message : String(e), eps: [] })
    }
  }
  for (const lib of options.providerLibraries ?? []) {
    const existing = runtime.registeredLibraries().find((l) => l.name === lib.name && l.path === lib.path)
    try {
      const reg = existing ?? runtime.registerProviderLibrary(lib.name, lib.path)
      libraries.push({ ...lib, ok: true, reason: null, eps: reg.eps })
    } catch (e) {
      libraries.push({ ...lib, ok: false, reason: e instanceof Error ? e.message : String(e), eps: [] })
    }
  }
  const registered = libraries.filter((l) => l.ok).map(({ name, path }) => ({ name, path }))
  // the built-in providers are onnxruntime-node's (listed by discover.ts): the C API's view of them is not repeated
  const listed = runtime.epDevices().filter((d) => !BUILT_IN_EPS.has(d.epName))
  const probes = new Map<string, EpProbeResult>()
  if (options.probe ?? true) {
    for (const ep of new Set(listed.map((d) => d.epName))) {
      probes.set(ep, await probeEp({ epName: ep, libraries: registered }, { timeoutMs: options.timeoutMs }))
    }
  }
  const seen = new Map<string, number>()
  const devices = listed.map((d): DeviceInfo => {
    const index = seen.get(d.epName) ?? 0
    seen.set(d.epName, index + 1)
    const probe = probes.get(d.epName) ?? null
    const virtual = d.hardwareMetadata.IsVirtual === '1'
    const name = d.epName === VIRTUAL_NPU_EP ? VIRTUAL_NPU_LABEL : (d.hardwareMetadata.Description ?? `${d.hardwareVendor} ${d.hardwareType.toUpperCase()} (${d.epName})`)
    const contribOps = probe?.ok ? CONTRIB_OPS.filter((op) => probe.checks.some((c) => c.ok && c.name === op)) : []
    return {
      id: idOf(d, index),
      name,
      ep: d.epName,
      kind: kindOf(d),
      software: virtual,
      status: probe === null ? 'unprobed' : probe.ok ? 'ready' : 'failed',
      reason: probe === null ? 'not probed yet' : probe.reason,
      probeMs: probe === null ? null : Math.round(probe.probeMs),
      contract: {
        staticShapesOnly: probe?.ok ? probe.staticShapesOnly : d.epMetadata.static_shapes_only === '1',
        int8Only: false,
        maxTensorBytes: null,
        supportsContribOps: contribOps
      },
      sharesComputeWith: virtual && d.epMetadata.runs_on === 'cpu' ? ['cpu'] : [],
      detection: `ONNX Runtime EP device via the C API: ${d.epName} by ${d.epVendor}, hardware ${d.hardwareType} by ${d.hardwareVendor}${d.library ? `, provider library "${d.library}"` : ''}`,
      checks: probe?.checks ?? [],
      ...optionsOf(libraries.find((l) => l.ok && l.name === d.library))
    }
  })
  return { devices, libraries }
}

/** Provider libraries to register and list, for discoverAllDevices. */
export interface ProviderOptions {
  readonly providerLibraries?: readonly ProviderLibrary[]
  readonly virtualNpu?: boolean
  readonly virtualNpuOptions?: Readonly<Record<string, string>>
}

/**
 * This machine's devices: onnxruntime-node's (discover.ts), then those of the provider libraries named
 * (registered first; none named: no C-API work at all), with how each library's registration went.
 */
export async function discoverAllDevices(
  providers: ProviderOptions,
  options: { probe?: boolean; timeoutMs?: number; log?: (line: string) => void } = {}
): Promise<{ devices: DeviceInfo[]; libraries: ProviderLibraryStatus[] }> {
  const devices = await discoverDevices({ probe: options.probe, timeoutMs: options.timeoutMs })
  if (providers.virtualNpu !== true && (providers.providerLibraries ?? []).length === 0) return { devices, libraries: [] }
  const ep = await discoverEpDevices({ ...providers, ...options })
  return { devices: [...devices, ...ep.devices], libraries: ep.libraries }
}
