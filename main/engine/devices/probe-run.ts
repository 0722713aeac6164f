/**
 * @file Runs the probe cases on one execution provider in the calling thread, every session with ORT's CPU
 * fallback disabled, and compares each output with its JS answer. Meant to run inside a probe child process
 * (probe-child.ts): a driver that crashes takes down only that child. Sessions are created and released one
 * at a time, so at most one WebGPU session exists at once. A target is an onnxruntime-node EP (its catalog
 * name) or an EP device reached through the C API (a plugin provider library, registered in this process).
 */
import { type EpProbeResult, type ProbeCheck } from './device'
import { OrtCRuntime } from './ort-c/runtime'
import { EpSession, NativeTensor } from './ort-c/session'
import { createSession, float32Tensor, tensorFloat32Data } from './ort'
import { contribOpCases, matmulAddCase, PROBE_TOLERANCE, type ProbeCase, type ProbeRun } from './probe-cases'

/** A provider library to register before probing (registration name and file). */
export interface ProviderLibrary {
  readonly name: string
  readonly path: string
  /** provider options for sessions on its devices (e.g. OpenVINO's device_type, the virtual NPU's gops) */
  readonly options?: Readonly<Record<string, string>>
}

/** An EP device reached through the C API: the first device of `epName` once `libraries` are registered. */
export interface EpDeviceTarget {
  readonly epName: string
  readonly libraries: readonly ProviderLibrary[]
}

/** What a probe runs on: an onnxruntime-node EP by catalog name, or an EP device through the C API. */
export type ProbeTarget = string | EpDeviceTarget

/** The EP name a target reports results under. */
export function probeTargetEp(target: ProbeTarget): string {
  return typeof target === 'string' ? target : target.epName
}

/** One probe session, whichever gate opened it. */
interface ProbeSession {
  run(feeds: ProbeRun['feeds'], output: string): Promise<Float32Array>
  release(): Promise<void>
}

async function openNodeSession(ep: string, bytes: Uint8Array): Promise<ProbeSession> {
  const session = await createSession(bytes, { ep, cpuFallback: false, intraOpThreads: 1 })
  return {
    async run(feeds, output) {
      const out = await session.run(Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, float32Tensor(f.data, f.dims)])), [output])
      const got = out[output]
      if (got === undefined) throw new Error(`output ${output} missing`)
      return tensorFloat32Data(got, output)
    },
    release: () => session.release()
  }
}

function openEpDeviceSession(target: EpDeviceTarget, bytes: Uint8Array): ProbeSession {
  const runtime = OrtCRuntime.open()
  for (const lib of target.libraries) {
    if (!runtime.registeredLibraries().some((l) => l.name === lib.name)) runtime.registerProviderLibrary(lib.name, lib.path)
  }
  const session = EpSession.create(runtime, bytes, { device: { epName: target.epName }, cpuFallback: false, intraOpThreads: 1 })
  return {
    async run(feeds, output) {
      const tensors = Object.fromEntries(Object.entries(feeds).map(([k, f]) => [k, NativeTensor.create(runtime, 'float32', f.dims, f.data)]))
      try {
        const got = session.run(tensors, [output])[output]
        if (got === undefined || !(got.data instanceof Float32Array)) throw new Error(`output ${output} missing or not float32`)
        return got.data
      } finally {
        for (const t of Object.values(tensors)) t.release()
      }
    },
    release: async () => session.release()
  }
}

function openProbeSession(target: ProbeTarget, bytes: Uint8Array): Promise<ProbeSession> {
  return typeof target === 'string' ? openNodeSession(target, bytes) : Promise.resolve().then(() => openEpDeviceSession(target, bytes))
}

/** Longest ORT message kept in a check or reason; ORT prefixes long source paths. */
export const MAX_PROBE_MESSAGE_CHARS = 600

/** ORT's error message, shortened and on one line. */
export function shortMessage(e: unknown): string {
  const text = (e instanceof Error ? e.message : String(e)).replace(/\s+/g, ' ').trim()
  return text.length > MAX_PROBE_MESSAGE_CHARS ? `${text.slice(0, MAX_PROBE_MESSAGE_CHARS)}…` : text
}

/** Largest |a − b|; Infinity when lengths differ or a value is not finite. */
function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Infinity
  let worst = 0
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i])
    if (!Number.isFinite(d)) return Infinity
    if (d > worst) worst = d
  }
  return worst
}

/** Loads one case on `target` with CPU fallback off, runs every run, compares with JS. */
export async function runProbeCase(target: ProbeTarget, probe: ProbeCase): Promise<ProbeCheck> {
  const t0 = performance.now()
  let session
  try {
    session = await openProbeSession(target, probe.bytes)
  } catch (e) {
    return { name: probe.name, ok: false, maxAbsError: null, ms: performance.now() - t0, error: shortMessage(e) }
  }
  try {
    let worst = 0
    for (const run of probe.runs) worst = Math.max(worst, maxAbsDiff(await session.run(run.feeds, probe.output), run.expected))
    const ok = worst <= PROBE_TOLERANCE
    return {
      name: probe.name,
      ok,
      maxAbsError: Number.isFinite(worst) ? worst : null,
      ms: performance.now() - t0,
      error: ok ? null : `output differs from JS by ${worst} (tolerance ${PROBE_TOLERANCE})`
    }
  } catch (e) {
    return { name: probe.name, ok: false, maxAbsError: null, ms: performance.now() - t0, error: shortMessage(e) }
  } finally {
    await session.release()
  }
}

/**
 * Probes `target`: the MatMul + Add graph with a dynamic batch (falling back to fixed shapes to learn whether
 * the EP needs them), then each contrib op. The EP is usable when the basic graph loaded and matched JS.
 */
export async function probeEpInProcess(target: ProbeTarget): Promise<EpProbeResult> {
  const t0 = performance.now()
  const checks: ProbeCheck[] = []
  let basic = await runProbeCase(target, matmulAddCase(true))
  let staticShapesOnly = false
  if (!basic.ok) {
    const fixed = await runProbeCase(target, matmulAddCase(false))
    if (fixed.ok) {
      staticShapesOnly = true
      basic = { ...fixed, name: 'MatMul+Add (fixed shapes; dynamic failed)' }
    }
  }
  checks.push(basic)
  if (basic.ok) for (const c of contribOpCases()) checks.push(await runProbeCase(target, c))
  return {
    ep: probeTargetEp(target),
    ok: basic.ok,
    reason: basic.ok ? null : basic.error,
    staticShapesOnly,
    checks,
    probeMs: performance.now() - t0
  }
}
