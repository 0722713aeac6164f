/**
 * @file The probe graphs against their JS answers (in this process, CPU EP), the CPU-fallback switch on
 * WebGPU (a graph the EP cannot take fails instead of running on the CPU), and the probe child's failure
 * paths (unknown EP, timeout, malformed messages).
 */
import { describe, expect, it } from 'vitest'
import {
  clearProbeCache,
  contribOpCases,
  createSession,
  float32Tensor,
  GraphBuilder,
  matmulAddCase,
  parseProbeMessage,
  probeEp,
  ProbeProtocolError,
  runProbeCase,
  tensorFloat32Data
} from './imports'
import { lavapipeSkipReason } from './lavapipe'

describe('probe graphs', () => {
  const cases = [matmulAddCase(true), matmulAddCase(false), ...contribOpCases()]

  it.each(cases.map((c) => [c.name, c]))('%s on the CPU EP matches the JS answer to 1e-5', async (_name, probe) => {
    const session = await createSession(probe.bytes, { ep: 'cpu', cpuFallback: false })
    try {
      for (const run of probe.runs) {
        const feeds = Object.fromEntries(Object.entries(run.feeds).map(([k, f]) => [k, float32Tensor(f.data, f.dims)]))
        const out = await session.run(feeds, [probe.output])
        const got = tensorFloat32Data(out[probe.output], probe.output)
        expect(got.length).toBe(run.expected.length)
        for (let i = 0; i < got.length; i++) expect(Math.abs(got[i] - run.expected[i])).toBeLessThan(1e-5)
      }
    } finally {
      await session.release()
    }
  })

  it('a probe whose output does not match its JS answer fails the check', async () => {
    const probe = matmulAddCase(true)
    const wrong = { ...probe, runs: probe.runs.map((r) => ({ ...r, expected: r.expected.map((v) => v + 0.01) })) }
    const check = await runProbeCase('cpu', wrong)
    expect(check).toMatchObject({ name: 'MatMul+Add', ok: false })
    expect(check.error).toMatch(/differs from JS/)
  })
})

/** x [4] -> QuantizeLinear (uint8) -> DequantizeLinear -> y [4]: ops the WebGPU EP leaves to the CPU. */
function qdqGraph(): Uint8Array {
  const b = new GraphBuilder('qdq')
  const x = b.input('X', 'float32', [4])
  const scale = b.f32('scale', [], Float32Array.of(0.05))
  const zero = b.initializer('zero', 'uint8', [], Uint8Array.of(128))
  const q = b.op('QuantizeLinear', [x, scale, zero])
  b.output(b.op('DequantizeLinear', [q, scale, zero], { outputs: ['Y'] }), 'float32', [4])
  return b.toBytes('test')
}

describe.skipIf(lavapipeSkipReason !== null)(`CPU fallback on WebGPU${lavapipeSkipReason !== null ? ` (skipped: ${lavapipeSkipReason})` : ''}`, () => {
  it('a graph the EP cannot take fails with the fallback-disabled error instead of running on the CPU', async () => {
    await expect(createSession(qdqGraph(), { ep: 'webgpu', cpuFallback: false })).rejects.toThrow(/fallback to CPU EP has been explicitly disabled/)
    // the same graph is valid: with fallback allowed ORT quietly runs it (on the CPU)
    const session = await createSession(qdqGraph(), { ep: 'webgpu', cpuFallback: true })
    try {
      const out = await session.run({ X: float32Tensor(Float32Array.of(0, 0.5, -1, 2), [4]) })
      expect(Array.from(tensorFloat32Data(out.Y, 'Y'))).toEqual([0, 0.5, -1, 2].map((v) => Math.fround(Math.round(v / 0.05) * 0.05)))
    } finally {
      await session.release()
    }
  })
})

describe('probe child failures', () => {
  it('an EP this build does not have fails with ORT\'s message', async () => {
    const r = await probeEp('nosuchep')
    expect(r.ok).toBe(false)
    expect(r.reason).toMatch(/nosuchep/)
    expect(r.checks[0]).toMatchObject({ name: 'MatMul+Add', ok: false })
  })

  it('a probe over its timeout is killed, reported failed, and not cached', async () => {
    clearProbeCache()
    const r = await probeEp('cpu', { timeoutMs: 1 })
    expect(r).toMatchObject({ ok: false, checks: [] })
    expect(r.reason).toMatch(/timed out after 1 ms/)
    const again = await probeEp('cpu')
    expect(again.ok).toBe(true)
  })

  it('rejects malformed probe messages', () => {
    const good = { type: 'result', result: { ep: 'cpu', ok: true, reason: null, staticShapesOnly: false, checks: [], probeMs: 1 } }
    expect(parseProbeMessage(good)).toEqual(good)
    expect(() => parseProbeMessage({ type: 'result', result: { ...good.result, ok: 'yes' } })).toThrow(ProbeProtocolError)
    expect(() => parseProbeMessage({ type: 'result', result: { ...good.result, checks: [{ name: 'x' }] } })).toThrow(ProbeProtocolError)
    expect(() => parseProbeMessage({ type: 'result', result: { ...good.result, probeMs: -1 } })).toThrow(ProbeProtocolError)
    expect(() => parseProbeMessage({ type: 'crash' })).toThrow(ProbeProtocolError)
    expect(() => parseProbeMessage(null)).toThrow(ProbeProtocolError)
  })
})
