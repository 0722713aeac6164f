/**
 * @file Device discovery on this machine, probes in real child processes: the CPU is always ready, a second
 * CPU worker is listed honestly, WebGPU on Mesa lavapipe is ready and labelled a software GPU, unbundled EPs
 * are unavailable, and every probe graph matched JS.
 */
import { describe, expect, it } from 'vitest'
import { CONTRIB_OPS, discoverDevices, PROBE_TOLERANCE, probeEp, type DeviceInfo } from '../../main/engine/devices'
import { lavapipeSkipReason } from './lavapipe'

const devices = discoverDevices({ probe: true })

function byId(list: readonly DeviceInfo[], id: string): DeviceInfo {
  const d = list.find((x) => x.id === id)
  if (d === undefined) throw new Error(`no device ${id} in ${list.map((x) => x.id).join(', ')}`)
  return d
}

describe('discoverDevices', () => {
  it('lists the CPU first, ready, with every contrib op and probe outputs matching JS', async () => {
    const list = await devices
    const cpu = list[0]
    expect(cpu).toMatchObject({ id: 'cpu', ep: 'cpu', kind: 'cpu', status: 'ready', reason: null, software: false })
    expect(cpu.name).toMatch(/^CPU \(.+, \d+ cores?\)$/)
    expect(cpu.contract).toEqual({ staticShapesOnly: false, int8Only: false, maxTensorBytes: null, supportsContribOps: [...CONTRIB_OPS] })
    expect(cpu.checks.map((c) => c.name)).toEqual(['MatMul+Add', ...CONTRIB_OPS])
    for (const c of cpu.checks) {
      expect(c.ok, `${c.name}: ${c.error}`).toBe(true)
      expect(c.maxAbsError).toBeLessThanOrEqual(PROBE_TOLERANCE)
    }
    expect(cpu.probeMs).toBeGreaterThan(0)
  })

  it('lists a second CPU worker that says it shares the same cores', async () => {
    const list = await devices
    const second = byId(list, 'cpu-2')
    expect(second).toMatchObject({ ep: 'cpu', kind: 'cpu', software: true, status: 'ready' })
    expect(second.name).toContain('same')
    expect(second.sharesComputeWith).toContain('cpu')
    expect(byId(list, 'cpu').sharesComputeWith).toContain('cpu-2')
  })

  it('reports EPs the binding lists but does not bundle as unavailable, with the reason, after the usable ones', async () => {
    const list = await devices
    const unavailable = list.filter((d) => d.status === 'unavailable')
    for (const d of unavailable) {
      expect(d.reason).toBeTruthy()
      expect(d.checks).toEqual([])
    }
    if (process.platform === 'linux' && process.arch === 'x64') expect(byId(list, 'cuda-0').reason).toMatch(/does not bundle/)
    const firstUnavailable = list.findIndex((d) => d.status === 'unavailable')
    if (firstUnavailable >= 0) expect(list.slice(firstUnavailable).every((d) => d.status === 'unavailable')).toBe(true)
  })

  it('caches probe results per process', async () => {
    await devices
    // discovery probed the CPU; later callers, one after another or at once, get that very result object
    // (a new probe, a child process, would make a new one)
    const first = await probeEp('cpu')
    const [a, b] = await Promise.all([probeEp('cpu'), probeEp('cpu')])
    expect(a).toBe(first)
    expect(b).toBe(first)
  })

  it('without probing: CPU ready, other bundled EPs unprobed', async () => {
    const list = await discoverDevices({ probe: false })
    expect(byId(list, 'cpu')).toMatchObject({ status: 'ready', probeMs: null, checks: [] })
    const webgpu = list.find((d) => d.ep === 'webgpu')
    if (webgpu !== undefined) expect(webgpu).toMatchObject({ status: 'unprobed', probeMs: null })
  })
})

describe.skipIf(lavapipeSkipReason !== null)(`WebGPU on Mesa lavapipe${lavapipeSkipReason !== null ? ` (skipped: ${lavapipeSkipReason})` : ''}`, () => {
  it('is ready, labelled a software GPU sharing the CPU, with every contrib op matching JS', async () => {
    const list = await devices
    const gpu = byId(list, 'webgpu-0')
    expect(gpu).toMatchObject({ ep: 'webgpu', kind: 'software-gpu', software: true, status: 'ready', reason: null })
    expect(gpu.name).toBe('Software GPU (Mesa lavapipe via WebGPU)')
    expect(gpu.detection).toMatch(/lvp_icd/)
    expect(gpu.sharesComputeWith).toEqual(['cpu', 'cpu-2'])
    expect(gpu.contract.supportsContribOps).toEqual([...CONTRIB_OPS])
    expect(gpu.contract.staticShapesOnly).toBe(false)
    for (const c of gpu.checks) {
      expect(c.ok, `${c.name}: ${c.error}`).toBe(true)
      expect(c.maxAbsError).toBeLessThanOrEqual(PROBE_TOLERANCE)
    }
  })
})
