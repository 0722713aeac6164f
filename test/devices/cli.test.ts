/** @file `tandem devices` as users run it: a child process through bin/tandem.mjs, probing for real. */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { CONTRIB_OPS } from '../../main/engine/devices'
import { repoRoot } from '../helpers/paths'
import { compilerSkipReason } from './compiler'

const run = promisify(execFile)

async function tandem(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(repoRoot, 'bin', 'tandem.mjs'), ...args], { timeout: 120_000 })
    return { code: 0, stdout, stderr }
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }
  }
}

const DEVICE_KEYS = ['id', 'name', 'ep', 'kind', 'software', 'status', 'reason', 'probeMs', 'contract', 'sharesComputeWith', 'detection', 'checks']

describe('tandem devices', () => {
  it('--json prints one JSON array of DeviceInfo, CPU first and ready', async () => {
    const r = await tandem(['devices', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    const list: unknown = JSON.parse(lines[0])
    expect(Array.isArray(list)).toBe(true)
    if (!Array.isArray(list)) return
    for (const d of list) {
      expect(Object.keys(d)).toEqual(DEVICE_KEYS)
      expect(d).toMatchObject({
        id: expect.any(String),
        name: expect.any(String),
        kind: expect.stringMatching(/^(cpu|igpu|dgpu|npu|software-gpu)$/),
        status: expect.stringMatching(/^(ready|failed|unavailable|unprobed)$/),
        contract: { staticShapesOnly: expect.any(Boolean), int8Only: expect.any(Boolean), supportsContribOps: expect.any(Array) }
      })
      if (d.status !== 'ready') expect(typeof d.reason).toBe('string')
    }
    expect(list[0]).toMatchObject({ id: 'cpu', status: 'ready', contract: { supportsContribOps: [...CONTRIB_OPS] } })
  })

  it('--no-probe prints the table without starting probes; bad flags exit 2', async () => {
    const r = await tandem(['devices', '--no-probe'])
    expect(r.code, r.stderr).toBe(0)
    const [header, ...rows] = r.stdout.trim().split('\n')
    expect(header.split(/\s{2,}/)).toEqual(['ID', 'NAME', 'KIND', 'EP', 'STATUS', 'PROBE MS', 'CONTRACT', 'REASON'])
    expect(rows[0]).toMatch(/^cpu\s+CPU \(.*\)\s+cpu\s+cpu\s+ready\s+-\s+/)
    expect((await tandem(['devices', '--bogus'])).code).toBe(2)
  })

  it.skipIf(compilerSkipReason !== null)('--virtual-npu lists the virtual NPU as an NPU device; a provider library that fails is reported with the reason', async () => {
    const r = await tandem(['devices', '--json', '--no-probe', '--virtual-npu', '--ep-library', 'broken=/nonexistent/libep.so'])
    expect(r.code, r.stderr).toBe(0)
    const list: unknown = JSON.parse(r.stdout)
    if (!Array.isArray(list)) throw new Error('not an array')
    const npu = list.find((d) => d.ep === 'TandemVirtualNPU')
    expect(npu).toMatchObject({ kind: 'npu', software: true, name: 'Virtual NPU (test provider, runs on the CPU)', status: 'unprobed', sharesComputeWith: ['cpu'] })
    expect(npu.detection).toMatch(/provider library "tandem-virtual-npu"/)
    expect(r.stderr).toMatch(/provider library "broken" \(\/nonexistent\/libep\.so\) failed: .*Failed to load library/)
    expect((await tandem(['devices', '--ep-library', 'no-equals-sign'])).code).toBe(2)
    expect((await tandem(['devices', '--ep-library', 'bad name=/x.so'])).code).toBe(2)
  }, 240_000)
})
