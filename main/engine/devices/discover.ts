/**
 * @file Device discovery: which EPs this onnxruntime-node build and this OS have, a probe of each usable one,
 * and one DeviceInfo per device. CPU comes first and is the fallback; a second CPU worker is listed as its
 * own device (sharing the same cores, and saying so); a failed or unavailable device is listed, never used.
 */
import { CONTRIB_OPS, type ContribOp, type DeviceContract, type DeviceInfo, type EpProbeResult } from './device'
import { EP_CATALOG, isKnownEp, platformEps, type EpFacts } from './catalog'
import { describeCpu, guessWebGpuAdapter, type GpuGuess } from './host'
import { listSupportedBackends, ortVersion, type BackendInfo } from './ort'
import { probeEp } from './probe'

/** Options for discoverDevices. */
export interface DiscoverOptions {
  /** run the probe graphs (default true); without it only the CPU is 'ready' and other EPs are 'unprobed' */
  readonly probe?: boolean
  /** per-EP probe timeout in ms (default DEFAULT_PROBE_TIMEOUT_MS) */
  readonly timeoutMs?: number
}

/** Id of the second CPU worker device. */
export const SECOND_CPU_ID = 'cpu-2'

/** The CPU's device id: every machine has it, ready. */
export const CPU_DEVICE_ID = 'cpu'

/** Device id for an EP's first device ('cpu' stays plain). */
function deviceId(ep: string): string {
  return ep === 'cpu' ? CPU_DEVICE_ID : `${ep}-0`
}

/** The contract: catalog facts, refined by what a successful probe saw. */
function contractOf(facts: EpFacts | null, probe: EpProbeResult | null): DeviceContract {
  const ok = probe?.ok === true
  const names: readonly string[] = CONTRIB_OPS
  const contribOps = ok ? probe.checks.filter((c) => c.ok && names.includes(c.name)).map((c) => c.name) : []
  return {
    staticShapesOnly: ok ? probe.staticShapesOnly : (facts?.staticShapesOnly ?? true),
    // an fp32 MatMul ran on the device, so it is not int8-only
    int8Only: ok ? false : (facts?.int8Only ?? false),
    maxTensorBytes: facts?.maxTensorBytes ?? null,
    // unprobed, only what the catalog assumes (the CPU's reference kernels: all of them)
    supportsContribOps: probe === null ? [...(facts?.contribOps ?? [])] : CONTRIB_OPS.filter((op: ContribOp) => contribOps.includes(op))
  }
}

/** Lists this machine's devices, probing each usable EP in a child process unless `probe` is false. */
export async function discoverDevices(options: DiscoverOptions = {}): Promise<DeviceInfo[]> {
  const probe = options.probe ?? true
  const backends = listSupportedBackends()
  const backendOf = (ep: string): BackendInfo | undefined => backends.find((b) => b.name === ep)
  // EPs this OS can have, then anything else the binding lists that the catalog does not expect here
  const eps: string[] = platformEps()
  for (const b of backends) if (!eps.includes(b.name)) eps.push(b.name)
  const listed = backends.map((b) => `${b.name}${b.bundled ? '' : ' (not bundled)'}`).join(', ')

  const usable = eps.filter((ep) => backendOf(ep)?.bundled === true && isKnownEp(ep))
  const probes = new Map<string, EpProbeResult>()
  if (probe) {
    const results = await Promise.all(usable.map((ep) => probeEp(ep, { timeoutMs: options.timeoutMs })))
    for (const r of results) probes.set(r.ep, r)
  }

  const cpu = describeCpu()
  const gpu: GpuGuess | null = eps.includes('webgpu') ? guessWebGpuAdapter() : null
  const softwareOnCpu = gpu?.kind === 'software-gpu' && backendOf('webgpu')?.bundled === true
  const cpuIds = cpu.cores >= 2 ? ['cpu', SECOND_CPU_ID] : ['cpu']

  const devices: DeviceInfo[] = []
  for (const ep of eps) {
    const facts = isKnownEp(ep) ? EP_CATALOG[ep] : null
    const backend = backendOf(ep)
    const result = probes.get(ep) ?? null
    let status: DeviceInfo['status']
    let reason: string | null
    if (facts === null) {
      status = 'unavailable'
      reason = `onnxruntime-node lists '${ep}', but the engine has no facts about this EP yet`
    } else if (backend === undefined) {
      status = 'unavailable'
      reason = `not in this onnxruntime-node ${ortVersion()} build (it has: ${listed})`
    } else if (!backend.bundled) {
      status = 'unavailable'
      reason = `onnxruntime-node ${ortVersion()} lists '${ep}' but does not bundle its libraries`
    } else if (result === null) {
      status = ep === 'cpu' ? 'ready' : 'unprobed'
      reason = ep === 'cpu' ? null : 'not probed yet'
    } else {
      status = result.ok ? 'ready' : 'failed'
      reason = result.reason
    }
    const common = {
      ep,
      status,
      reason,
      probeMs: result === null ? null : Math.round(result.probeMs),
      contract: contractOf(facts, result),
      checks: result?.checks ?? []
    }
    if (ep === 'cpu') {
      const coresName = `${cpu.cores} ${cpu.cores === 1 ? 'core' : 'cores'}`
      const others = [...cpuIds.filter((id) => id !== 'cpu'), ...(softwareOnCpu ? ['webgpu-0'] : [])]
      devices.push(device({ id: 'cpu', name: `CPU (${cpu.model}, ${coresName})`, kind: 'cpu', software: false, sharesComputeWith: others, detection: 'os.cpus() model, os.availableParallelism() cores' }, common))
      const second = device(
        {
          id: SECOND_CPU_ID,
          name: `CPU worker 2 (same ${coresName} as cpu)`,
          kind: 'cpu',
          software: true,
          sharesComputeWith: ['cpu', ...(softwareOnCpu ? ['webgpu-0'] : [])],
          detection: 'a second CPU-EP worker thread on the same cores; no extra hardware (probe shared with cpu)'
        },
        common
      )
      devices.push(cpu.cores >= 2 ? second : { ...second, status: 'unavailable', reason: 'one core: a second CPU worker would only time-slice with the first' })
    } else if (ep === 'webgpu' && gpu !== null) {
      devices.push(device({ id: deviceId(ep), name: gpu.name, kind: gpu.kind, software: gpu.software, sharesComputeWith: softwareOnCpu ? cpuIds : [], detection: gpu.detection }, common))
    } else {
      devices.push(device({ id: deviceId(ep), name: facts?.label ?? ep, kind: facts?.kind ?? 'dgpu', software: false, sharesComputeWith: [], detection: `catalog facts for '${ep}' on ${process.platform}/${process.arch}` }, common))
    }
  }
  // usable devices first (ready, then unprobed/failed), unavailable last; stable otherwise
  const rank = { ready: 0, unprobed: 1, failed: 2, unavailable: 3 } as const
  return devices.map((d, i) => ({ d, i })).sort((a, b) => rank[a.d.status] - rank[b.d.status] || a.i - b.i).map(({ d }) => d)
}

/** What identifies a device (from the host) vs. what its EP and probe say. */
type DeviceHead = Pick<DeviceInfo, 'id' | 'name' | 'kind' | 'software' | 'sharesComputeWith' | 'detection'>
type DeviceBody = Pick<DeviceInfo, 'ep' | 'status' | 'reason' | 'probeMs' | 'contract' | 'checks'>

/** One DeviceInfo with its keys in reading order (the JSON the CLI prints). */
function device(h: DeviceHead, b: DeviceBody): DeviceInfo {
  return {
    id: h.id,
    name: h.name,
    ep: b.ep,
    kind: h.kind,
    software: h.software,
    status: b.status,
    reason: b.reason,
    probeMs: b.probeMs,
    contract: b.contract,
    sharesComputeWith: h.sharesComputeWith,
    detection: h.detection,
    checks: b.checks
  }
}
