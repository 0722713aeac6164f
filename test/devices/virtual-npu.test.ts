/**
 * @file The virtual NPU test provider, built from test/virtual-npu with the system compiler and registered
 * through the C API: it appears as an NPU-type EP device, runs static-shape graphs of its ops (its own counters
 * prove it, and the numbers are the CPU's), refuses dynamic shapes and ops off its list with a reason (so a graph
 * it cannot take fails instead of quietly running on the CPU), models a device's speed on request, compiles to an
 * EPContext model whose blobs a later session loads instead of compiling (paying the modelled compile time only
 * cold), and is probed and listed by discoverEpDevices like any provider's device.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import onnxProto from 'onnx-proto'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  discoverEpDevices,
  EpSession,
  GraphBuilder,
  NativeTensor,
  OrtCRuntime,
  registerVirtualNpu,
  VIRTUAL_NPU_EP,
  VIRTUAL_NPU_LABEL,
  virtualNpuStats,
  type RegisteredLibrary
} from './imports'
import { compilerSkipReason } from './compiler'

const BUILD_TIMEOUT_MS = 180_000
const runtime = OrtCRuntime.open()
let npu: RegisteredLibrary

beforeAll(async () => {
  if (compilerSkipReason === null) npu = await registerVirtualNpu(runtime)
}, BUILD_TIMEOUT_MS)

const W = Float32Array.from({ length: 12 }, (_, i) => (i - 6) / 10)

/** Y = X·W + B, then Softmax when asked (an op the NPU's default list lacks). */
function graph(rows: number | string, withSoftmax = false): Uint8Array {
  const b = new GraphBuilder('virtual-npu-test')
  const x = b.input('X', 'float32', [rows, 4])
  const xw = b.op('MatMul', [x, b.f32('W', [4, 3], W)])
  const bias = b.f32('B', [3], Float32Array.from([1, 2, 3]))
  if (withSoftmax) b.node('Softmax', [b.op('Add', [xw, bias])], { outputs: ['Y'], attrs: { axis: { int: -1 } } })
  else b.node('Add', [xw, bias], { outputs: ['Y'] })
  b.output('Y', 'float32', [rows, 3])
  return b.toBytes('virtual-npu-test')
}

const onNpu = (options: Record<string, string> = {}) => ({ device: { epName: VIRTUAL_NPU_EP }, cpuFallback: false, providerOptions: options })

/** Session config entries that make the session write an EPContext model to `ctxPath` (blobs in files). */
const generateContext = (ctxPath: string, embedMode = '0') => ({ 'ep.context_enable': '1', 'ep.context_file_path': ctxPath, 'ep.context_embed_mode': embedMode })

/** A fresh temporary folder holding graph(2) as model.onnx; removed by the caller. */
function modelDir(): { dir: string; model: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-vnpu-ctx-'))
  const model = join(dir, 'model.onnx')
  writeFileSync(model, graph(2))
  return { dir, model }
}

const blobsIn = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.vnpu.onnx'))
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A copy of the context model at `ctx` whose EPContext nodes point at `blob` instead, written to `out`. */
function pointContextAt(ctx: string, blob: string, out: string): void {
  const model = onnxProto.onnx.ModelProto.decode(readFileSync(ctx))
  for (const node of model.graph?.node ?? []) {
    const attr = node.attribute?.find((a) => a.name === 'ep_cache_context')
    if (node.opType === 'EPContext' && attr) attr.s = Buffer.from(blob)
  }
  writeFileSync(out, onnxProto.onnx.ModelProto.encode(model).finish())
}

function runOnce(session: EpSession): Float32Array {
  const X = NativeTensor.create(runtime, 'float32', [2, 4], Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]))
  try {
    const y = session.run({ X }).Y.data
    if (!(y instanceof Float32Array)) throw new Error('not float32')
    return y
  } finally {
    X.release()
  }
}

describe.skipIf(compilerSkipReason !== null)('the virtual NPU', () => {
  it('is an EP device of hardware type NPU, marked virtual and simulated', () => {
    const d = runtime.epDevices().find((e) => e.epName === VIRTUAL_NPU_EP)
    expect(d).toBeDefined()
    expect(d?.hardwareType).toBe('npu')
    expect(d?.hardwareMetadata.IsVirtual).toBe('1')
    expect(d?.epMetadata.simulated).toBe('1')
    expect(d?.library).toBe(npu.name)
    expect(npu.eps).toEqual([VIRTUAL_NPU_EP])
  })

  it('runs a static-shape graph itself (its counters move) with the CPU provider’s numbers', () => {
    const cpu = EpSession.create(runtime, graph(2))
    const session = EpSession.create(runtime, graph(2), onNpu())
    try {
      const before = virtualNpuStats(npu.path)
      const got = runOnce(session)
      runOnce(session)
      const after = virtualNpuStats(npu.path)
      expect(after.graphRuns - before.graphRuns).toBe(2)
      expect(after.nodesRun - before.nodesRun).toBeGreaterThanOrEqual(2)
      expect(got).toEqual(runOnce(cpu))
    } finally {
      session.release()
      cpu.release()
    }
  })

  it('refuses a dynamic-shape graph with the reason, instead of running it on the CPU', () => {
    expect(() => EpSession.create(runtime, graph('batch'), onNpu())).toThrow(/fallback to CPU EP has been explicitly disabled/)
    expect(virtualNpuStats(npu.path).lastRefusal).toMatch(/dynamic shape/)
  })

  it('refuses an op that is not on its list, and honours a narrower list', () => {
    expect(() => EpSession.create(runtime, graph(2, true), onNpu())).toThrow(/fallback to CPU EP has been explicitly disabled/)
    expect(virtualNpuStats(npu.path).lastRefusal).toMatch(/\(Softmax\): op not on this device's list/)
    // with CPU fallback allowed, ONNX Runtime splits the graph: the NPU keeps what it takes
    const before = virtualNpuStats(npu.path)
    const split = EpSession.create(runtime, graph(2, true), { device: { epName: VIRTUAL_NPU_EP } })
    try {
      runOnce(split)
      expect(virtualNpuStats(npu.path).graphRuns - before.graphRuns).toBe(1)
    } finally {
      split.release()
    }
    expect(() => EpSession.create(runtime, graph(2), onNpu({ ops: 'MatMul' }))).toThrow(/fallback to CPU EP has been explicitly disabled/)
    expect(() => EpSession.create(runtime, graph(2), onNpu({ ops: 'MatMul,Frobnicate' }))).toThrow(/cannot run op "Frobnicate"/)
    expect(() => EpSession.create(runtime, graph(2), onNpu({ gops: 'fast' }))).toThrow(/gops must be a non-negative number/)
  })

  it('with a throughput model, each run costs at least the modelled time (read from its counters)', () => {
    const session = EpSession.create(runtime, graph(2), onNpu({ launch_us: '3000', gops: '0.001' }))
    try {
      const before = virtualNpuStats(npu.path)
      for (let i = 0; i < 3; i++) runOnce(session)
      const after = virtualNpuStats(npu.path)
      const modelled = after.modelledMs - before.modelledMs
      // 3 runs × (3 ms launch + a few dozen operations at 1e6 per ms)
      expect(modelled).toBeGreaterThanOrEqual(9)
      expect(after.busyMs - before.busyMs).toBeGreaterThanOrEqual(modelled - 0.5)
    } finally {
      session.release()
    }
  })

  it('compiles to an EPContext model once; a later session loads its blob and skips the modelled compile time', () => {
    const { dir, model } = modelDir()
    const ctx = join(dir, 'model_ctx.onnx')
    const cpu = EpSession.create(runtime, graph(2))
    try {
      const expected = runOnce(cpu)
      const before = virtualNpuStats(npu.path)
      const started = performance.now()
      const cold = EpSession.create(runtime, model, { ...onNpu({ compile_ms: '300' }), configEntries: generateContext(ctx) })
      const coldMs = performance.now() - started
      try {
        expect(runOnce(cold)).toEqual(expected)
      } finally {
        cold.release()
      }
      const compiled = virtualNpuStats(npu.path)
      expect(compiled.contextBlobsWritten - before.contextBlobsWritten).toBe(1)
      expect(compiled.graphsCompiled - before.graphsCompiled).toBe(1)
      expect(compiled.modelledCompileMs - before.modelledCompileMs).toBe(300)
      expect(coldMs).toBeGreaterThanOrEqual(300) // a sleep's lower bound, not a speed claim
      expect(existsSync(ctx)).toBe(true)
      const blobs = blobsIn(dir)
      expect(blobs).toHaveLength(1)
      expect(blobs[0]).toMatch(/^model_ctx_.+\.vnpu\.onnx$/)
      // the context model names the blob relative to itself, never by an absolute path
      const ctxBytes = readFileSync(ctx)
      expect(ctxBytes.includes(Buffer.from(blobs[0] ?? ''))).toBe(true)
      expect(ctxBytes.includes(Buffer.from(dir))).toBe(false)

      const warm = EpSession.create(runtime, ctx, onNpu({ compile_ms: '300' }))
      try {
        const loaded = virtualNpuStats(npu.path)
        expect(loaded.contextBlobsLoaded - compiled.contextBlobsLoaded).toBe(1)
        expect(loaded.graphsCompiled).toBe(compiled.graphsCompiled)
        expect(loaded.modelledCompileMs).toBe(compiled.modelledCompileMs)
        expect(loaded.contextBlobsWritten).toBe(compiled.contextBlobsWritten)
        expect(runOnce(warm)).toEqual(expected)
        const ran = virtualNpuStats(npu.path)
        expect(ran.graphRuns - loaded.graphRuns).toBe(1)
        // the node count came back from the EPContext node's notes
        expect(ran.nodesRun - loaded.nodesRun).toBe(compiled.nodesRun - before.nodesRun)
      } finally {
        warm.release()
      }
    } finally {
      cpu.release()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('refuses, with the reason, a context model whose blob is gone or outside its folder, embed mode 1, and compiling a compiled model', () => {
    const { dir, model } = modelDir()
    const ctx = join(dir, 'model_ctx.onnx')
    try {
      expect(() => EpSession.create(runtime, model, { ...onNpu(), configEntries: generateContext(ctx, '1') })).toThrow(/writes its compiled blobs to files.*embed_mode=0/)
      EpSession.create(runtime, model, { ...onNpu(), configEntries: generateContext(ctx) }).release()
      // already compiled: generating again from the context model
      expect(() => EpSession.create(runtime, ctx, { ...onNpu(), configEntries: generateContext(join(dir, 'again_ctx.onnx')) })).toThrow(/already compiled/)
      // from bytes there is no folder to find the blob in
      expect(() => EpSession.create(runtime, readFileSync(ctx), onNpu())).toThrow(/must be opened from a file/)
      const [blob] = blobsIn(dir)
      expect(blob).toBeDefined()
      // a model file cannot make the device open files outside its folder
      for (const outside of [`../${blob}`, join(dir, blob ?? '')]) {
        pointContextAt(ctx, outside, join(dir, 'moved_ctx.onnx'))
        expect(() => EpSession.create(runtime, join(dir, 'moved_ctx.onnx'), onNpu())).toThrow(/leaves the model's folder/)
      }
      rmSync(join(dir, blob ?? ''))
      expect(() => EpSession.create(runtime, ctx, onNpu())).toThrow(new RegExp(`${escapeRegExp(join(dir, blob ?? ''))} is missing`))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('is probed in a child process and listed as a device: static shapes only, labelled as simulated', async () => {
    const { devices, libraries } = await discoverEpDevices({ virtualNpu: true, providerLibraries: [{ name: 'missing', path: '/nonexistent/libep.so' }] })
    const d = devices.find((x) => x.ep === VIRTUAL_NPU_EP)
    expect(d?.status, d?.reason ?? '').toBe('ready')
    expect(d?.kind).toBe('npu')
    expect(d?.name).toBe(VIRTUAL_NPU_LABEL)
    expect(d?.software).toBe(true)
    expect(d?.contract.staticShapesOnly).toBe(true)
    expect(d?.contract.supportsContribOps).toContain('SimplifiedLayerNormalization')
    expect(d?.contract.supportsContribOps).not.toContain('GroupQueryAttention')
    expect(d?.checks.find((c) => c.name === 'GroupQueryAttention')?.error).toMatch(/fallback to CPU EP/)
    const missing = libraries.find((l) => l.name === 'missing')
    expect(missing?.ok).toBe(false)
    expect(missing?.reason).toMatch(/Failed to load library/)
  }, 120_000)
})
