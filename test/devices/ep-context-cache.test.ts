/**
 * @file The compiled-model cache of provider-library devices, on the virtual NPU with a modelled compile cost:
 * the first open of a cached graph compiles and writes an EPContext entry beside it, the next open loads the
 * entry (the provider's counters: a blob loaded, no compile), other provider options get their own entry, and a
 * damaged entry is compiled again instead of failing.
 */
import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers/paths'
import { compilerSkipReason } from './compiler'
import { createDeviceSession, EP_CONTEXT_DIR, float32Tensor, GraphBuilder, OrtCRuntime, registerVirtualNpu, tensorFloat32Data, VIRTUAL_NPU_EP, virtualNpuStats, type OrtSession, type RegisteredLibrary } from './imports'

const BUILD_TIMEOUT_MS = 180_000
let npu: RegisteredLibrary
const temp = tempDir('tandem-ep-context-')

beforeAll(async () => {
  if (compilerSkipReason === null) npu = await registerVirtualNpu(OrtCRuntime.open())
}, BUILD_TIMEOUT_MS)
afterAll(() => temp.dispose())

/** A cached graph file: Y = X·W + B on a fixed [2, 4] input (static, so the NPU takes all of it). */
function graphFile(name: string): string {
  const b = new GraphBuilder('ep-context-test')
  const x = b.input('X', 'float32', [2, 4])
  const xw = b.op('MatMul', [x, b.f32('W', [4, 3], Float32Array.from({ length: 12 }, (_, i) => (i - 5) / 7))])
  b.node('Add', [xw, b.f32('B', [3], Float32Array.from([1, 2, 3]))], { outputs: ['Y'] })
  b.output('Y', 'float32', [2, 3])
  const path = join(temp.dir, name)
  writeFileSync(path, b.toBytes('ep-context-test'))
  return path
}

async function runOnce(session: OrtSession): Promise<Float32Array> {
  const out = await session.run({ X: float32Tensor(Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]), [2, 4]) })
  return tensorFloat32Data(out.Y, 'Y')
}

async function openAndRun(path: string, options: Record<string, string>): Promise<Float32Array> {
  const session = await createDeviceSession(path, { ep: VIRTUAL_NPU_EP, cpuFallback: false, providerOptions: options })
  try {
    return await runOnce(session)
  } finally {
    await session.release()
  }
}

const entries = () => readdirSync(join(temp.dir, EP_CONTEXT_DIR)).filter((f) => !f.includes('.tmp-'))

describe.skipIf(compilerSkipReason !== null)('the EP-context cache on the virtual NPU', () => {
  it('compiles once, then loads the compiled entry; other options get their own; a damaged entry is compiled again', async () => {
    const path = graphFile('g1.onnx')
    const cpu = await createDeviceSession(path, { ep: 'cpu' })
    const want = await runOnce(cpu)
    await cpu.release()

    const s0 = virtualNpuStats(npu.path)
    expect(await openAndRun(path, { compile_ms: '250' })).toEqual(want)
    const s1 = virtualNpuStats(npu.path)
    expect(s1.contextBlobsWritten - s0.contextBlobsWritten).toBe(1)
    expect(s1.modelledCompileMs - s0.modelledCompileMs).toBeCloseTo(250, 0)
    expect(entries()).toHaveLength(1)

    // warm: the entry is loaded, the compiler (and its modelled cost) skipped
    expect(await openAndRun(path, { compile_ms: '250' })).toEqual(want)
    const s2 = virtualNpuStats(npu.path)
    expect(s2.contextBlobsLoaded - s1.contextBlobsLoaded).toBe(1)
    expect(s2.graphsCompiled).toBe(s1.graphsCompiled)
    expect(s2.modelledCompileMs).toBe(s1.modelledCompileMs)

    // other provider options compile into an entry of their own
    expect(await openAndRun(path, { compile_ms: '0' })).toEqual(want)
    expect(entries()).toHaveLength(2)

    // a lost blob: the entry is dropped and written again, and the result is still right
    for (const entry of entries()) for (const f of readdirSync(join(temp.dir, EP_CONTEXT_DIR, entry))) if (f.endsWith('.vnpu.onnx')) rmSync(join(temp.dir, EP_CONTEXT_DIR, entry, f))
    const s3 = virtualNpuStats(npu.path)
    expect(await openAndRun(path, { compile_ms: '250' })).toEqual(want)
    const s4 = virtualNpuStats(npu.path)
    expect(s4.contextBlobsWritten - s3.contextBlobsWritten).toBe(1)
    expect(await openAndRun(path, { compile_ms: '250' })).toEqual(want)
    expect(virtualNpuStats(npu.path).contextBlobsLoaded - s4.contextBlobsLoaded).toBe(1)
  })

  it('a graph the device refuses still fails with the provider’s reason, and leaves no entry behind', async () => {
    const b = new GraphBuilder('refused')
    const x = b.input('X', 'float32', ['rows', 4])
    b.node('Add', [x, b.f32('B', [4], Float32Array.from([1, 2, 3, 4]))], { outputs: ['Y'] })
    b.output('Y', 'float32', ['rows', 4])
    const path = join(temp.dir, 'dynamic.onnx')
    writeFileSync(path, b.toBytes('refused'))
    const before = entries().length
    await expect(createDeviceSession(path, { ep: VIRTUAL_NPU_EP, cpuFallback: false })).rejects.toThrow(/dynamic shape/)
    expect(readdirSync(join(temp.dir, EP_CONTEXT_DIR))).toHaveLength(before)
  })
})
