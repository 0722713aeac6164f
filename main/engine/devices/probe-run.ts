/**
 * @file Runs the probe cases on one execution provider in the calling thread, every session with ORT's CPU
 * fallback disabled, and compares each output with its JS answer. Meant to run inside a probe child process
 * (probe-child.ts): a driver that crashes takes down only that child. Sessions are created and released one
 * at a time, so at most one WebGPU session exists at once.
 */
import { type EpProbeResult, type ProbeCheck } from './device'
import { createSession, float32Tensor, tensorFloat32Data } from './ort'
import { contribOpCases, matmulAddCase, PROBE_TOLERANCE, type ProbeCase } from './probe-cases'

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

/** Loads one case on `ep` with CPU fallback off, runs every run, compares with JS. */
export async function runProbeCase(ep: string, probe: ProbeCase): Promise<ProbeCheck> {
  const t0 = performance.now()
  let session
  try {
    session = await createSession(probe.bytes, { ep, cpuFallback: false, intraOpThreads: 1 })
  } catch (e) {
    return { name: probe.name, ok: false, maxAbsError: null, ms: performance.now() - t0, error: shortMessage(e) }
  }
  try {
    let worst = 0
    for (const run of probe.runs) {
      const feeds = Object.fromEntries(Object.entries(run.feeds).map(([k, f]) => [k, float32Tensor(f.data, f.dims)]))
      const out = await session.run(feeds, [probe.output])
      const got = out[probe.output]
      if (got === undefined) throw new Error(`output ${probe.output} missing`)
      worst = Math.max(worst, maxAbsDiff(tensorFloat32Data(got, probe.output), run.expected))
    }
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
 * Probes `ep`: the MatMul + Add graph with a dynamic batch (falling back to fixed shapes to learn whether
 * the EP needs them), then each contrib op. The EP is usable when the basic graph loaded and matched JS.
 */
export async function probeEpInProcess(ep: string): Promise<EpProbeResult> {
  const t0 = performance.now()
  const checks: ProbeCheck[] = []
  let basic = await runProbeCase(ep, matmulAddCase(true))
  let staticShapesOnly = false
  if (!basic.ok) {
    const fixed = await runProbeCase(ep, matmulAddCase(false))
    if (fixed.ok) {
      staticShapesOnly = true
      basic = { ...fixed, name: 'MatMul+Add (fixed shapes; dynamic failed)' }
    }
  }
  checks.push(basic)
  if (basic.ok) for (const c of contribOpCases()) checks.push(await runProbeCase(ep, c))
  return {
    ep,
    ok: basic.ok,
    reason: basic.ok ? null : basic.error,
    staticShapesOnly,
    checks,
    probeMs: performance.now() - t0
  }
}
