/**
 * @file The C-API gate: the `OrtApi` slots against the vendored header (compiled here), the EP-device list,
 * provider-library registration errors, sessions on the CPU EP device against onnxruntime-node's on the trained
 * test models (same logits), and bound buffers (outputs written in place, no growth over many runs).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { compileModel } from '../../main/engine/graph'
import { loadModel } from '../../main/engine/model'
import { SingleSessionEngine } from '../../main/engine/runtime/session/single-session-engine'
import { repoRoot, sharedModel, tempDir } from '../helpers/paths'
import {
  createEpDeviceSession,
  createSession,
  EpSession,
  GraphBuilder,
  NativeTensor,
  ORT_C_API_VERSION,
  ORT_C_SLOTS,
  OrtCApiError,
  OrtCLibrary,
  OrtCRuntime,
  ortVersion
} from './imports'
import { compilerSkipReason } from './compiler'

const runtime = OrtCRuntime.open()

/** A static [rows, 4] · [4, 3] + bias graph. */
function matmulAdd(rows: number | string): Uint8Array {
  const b = new GraphBuilder('ort-c-test')
  const x = b.input('X', 'float32', [rows, 4])
  const w = b.f32('W', [4, 3], Float32Array.from({ length: 12 }, (_, i) => (i - 6) / 10))
  const bias = b.f32('B', [3], Float32Array.from([1, 2, 3]))
  b.node('Add', [b.op('MatMul', [x, w]), bias], { outputs: ['Y'] })
  b.output('Y', 'float32', [rows, 3])
  return b.toBytes('ort-c-test')
}

describe('the OrtApi table', () => {
  it.skipIf(compilerSkipReason !== null)(`every slot the binding calls matches offsetof in the vendored API ${ORT_C_API_VERSION} header`, () => {
    const t = tempDir('tandem-slots-')
    try {
      const src = join(t.dir, 'slots.c')
      const lines = ORT_C_SLOTS.map((f) => `  printf("${f.name} %zu\\n", offsetof(OrtApi, ${f.name}) / sizeof(void*));`)
      writeFileSync(src, `#include <stddef.h>\n#include <stdio.h>\n#include "onnxruntime_c_api.h"\nint main(void) {\n${lines.join('\n')}\n  return 0;\n}\n`)
      const exe = join(t.dir, 'slots')
      execFileSync('cc', [`-I${join(repoRoot, 'test', 'virtual-npu', 'include')}`, src, '-o', exe])
      const printed = execFileSync(exe, { encoding: 'utf8' }).trim().split('\n')
      expect(printed).toEqual(ORT_C_SLOTS.map((f) => `${f.name} ${f.slot}`))
    } finally {
      t.dispose()
    }
  })

  it("loads onnxruntime-node's own library: one runtime, one version", () => {
    expect(runtime.version).toBe(ortVersion())
    expect(existsSync(runtime.lib.path)).toBe(true)
  })

  it('a file that is not ONNX Runtime is refused with a clear error', () => {
    expect(() => OrtCLibrary.load('/nonexistent/libonnxruntime.so')).toThrow(/ONNX Runtime library not found: \/nonexistent/)
    expect(() => OrtCLibrary.load(process.execPath)).toThrow(/not an ONNX Runtime library|cannot load/)
  })
})

describe('EP devices and provider libraries', () => {
  it('lists the CPU EP device, typed cpu, with its vendor', () => {
    const cpu = runtime.epDevices().find((d) => d.epName === 'CPUExecutionProvider')
    expect(cpu).toBeDefined()
    expect(cpu?.hardwareType).toBe('cpu')
    expect(cpu?.epVendor).toBe('Microsoft')
    expect(cpu?.library).toBeNull()
  })

  it("a missing file fails with ONNX Runtime's message and registers nothing", () => {
    const before = runtime.registeredLibraries().length
    let error: unknown
    try {
      runtime.registerProviderLibrary('missing', '/nonexistent/libep.so')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(OrtCApiError)
    expect(String(error)).toMatch(/RegisterExecutionProviderLibrary: Failed to load library \/nonexistent\/libep\.so/)
    expect(runtime.registeredLibraries().length).toBe(before)
  })

  it('a shared library without CreateEpFactories is not a provider library', () => {
    const libc = ['/lib/x86_64-linux-gnu/libc.so.6', '/lib/aarch64-linux-gnu/libc.so.6', '/usr/lib/libc.so.6'].find((p) => existsSync(p))
    if (libc === undefined) return
    expect(() => runtime.registerProviderLibrary('libc', libc)).toThrow(/CreateEpFactories/)
  })

  it('names are checked before anything is loaded', () => {
    expect(() => runtime.registerProviderLibrary('', '/x.so')).toThrow(RangeError)
    expect(() => runtime.registerProviderLibrary('has space', '/x.so')).toThrow(/letters, digits/)
    expect(() => runtime.registerProviderLibrary('x'.repeat(65), '/x.so')).toThrow(RangeError)
  })

  it('selecting an EP device that is not there names what is', () => {
    expect(() => EpSession.create(runtime, matmulAdd(2), { device: { epName: 'NoSuchExecutionProvider' } })).toThrow(/no EP device matches .*CPUExecutionProvider \(cpu\)/)
  })
})

describe('sessions on the CPU EP device (V2) vs onnxruntime-node', () => {
  const PROMPT = [1, 403, 407, 261, 378, 432, 383, 286, 261]

  it.each(['stories260K/stories260K.gguf', 'stories260K/stories260K.bin', 'tinystories-656K'])('%s: identical logits for a prefill and 6 decode steps', async (path) => {
    const loaded = await loadModel(sharedModel(path))
    if (!loaded.weights) throw new Error('no weights')
    const model = { config: { ...loaded.config, contextLength: 64 }, weights: loaded.weights }
    const bytes = compileModel(model, { ropeTableLength: 64 })
    const viaNode = new SingleSessionEngine(model, await createSession(bytes, { ep: 'cpu', intraOpThreads: 1 }), { contextLength: 64, prefillChunkTokens: 4 })
    const viaC = new SingleSessionEngine(model, createEpDeviceSession(runtime, bytes, { device: { epName: 'CPUExecutionProvider' }, intraOpThreads: 1 }), {
      contextLength: 64,
      prefillChunkTokens: 4
    })
    try {
      let a = await viaNode.forward(PROMPT, 0)
      let b = await viaC.forward(PROMPT, 0)
      for (let step = 0; step < 6; step++) {
        expect(b).toEqual(a)
        let next = 0
        for (let i = 1; i < a.length; i++) if (a[i] > a[next]) next = i
        a = await viaNode.forward([next], PROMPT.length + step)
        b = await viaC.forward([next], PROMPT.length + step)
      }
      expect(b).toEqual(a)
    } finally {
      await viaNode.dispose()
      await viaC.dispose()
    }
  })
})

describe('the engine through the bound C-API session', () => {
  it('decode hands nothing over per token: the KV cache and outputs stay bound, no tensor is made after the first step', async () => {
    const loaded = await loadModel(sharedModel('stories260K/stories260K.gguf'))
    if (!loaded.weights) throw new Error('no weights')
    const model = { config: { ...loaded.config, contextLength: 64 }, weights: loaded.weights }
    const engine = new SingleSessionEngine(model, createEpDeviceSession(runtime, compileModel(model, { ropeTableLength: 64 }), { device: { epName: 'CPUExecutionProvider' }, intraOpThreads: 1 }), {
      contextLength: 64,
      prefillChunkTokens: 8
    })
    const made = vi.spyOn(NativeTensor, 'create')
    try {
      // the cache reserves its capacity for the whole call up front, so decode steps within it keep the same buffers
      await engine.forward([1, 403, 407, 261], 0)
      await engine.forward([378], 4)
      const afterFirstStep = made.mock.calls.length
      expect(afterFirstStep).toBeGreaterThan(0)
      for (let step = 0; step < 5; step++) await engine.forward([432], 5 + step)
      expect(made.mock.calls.length).toBe(afterFirstStep)
    } finally {
      made.mockRestore()
      await engine.dispose()
    }
  })
})

describe('tensors and bound buffers', () => {
  it('an input is used in place (a subarray too): changing it changes the next run', () => {
    const session = EpSession.create(runtime, matmulAdd(2))
    try {
      const backing = new Float32Array(16)
      const x = backing.subarray(4, 12)
      x.set([1, 2, 3, 4, 5, 6, 7, 8])
      const X = NativeTensor.create(runtime, 'float32', [2, 4], x)
      const first = session.run({ X }).Y.data
      x.fill(0)
      const second = session.run({ X }).Y.data
      expect(second).toEqual(Float32Array.from([1, 2, 3, 1, 2, 3]))
      expect(first).not.toEqual(second)
      X.release()
    } finally {
      session.release()
    }
  })

  it('outputs land in the bound buffer, run after run, with no growth in memory', () => {
    const session = EpSession.create(runtime, matmulAdd(64))
    const X = NativeTensor.create(runtime, 'float32', [64, 4])
    const Y = NativeTensor.create(runtime, 'float32', [64, 3])
    const binding = session.bind()
    try {
      binding.bindInput('X', X)
      binding.bindOutput('Y', Y)
      const out = Y.data
      const x = X.data
      if (!(x instanceof Float32Array)) throw new Error('not float32')
      const run = (i: number): void => {
        x.fill(i)
        binding.run()
      }
      for (let i = 0; i < 200; i++) run(i)
      const rss0 = process.memoryUsage.rss()
      const RUNS = 5000
      for (let i = 0; i < RUNS; i++) run(i % 7)
      const grown = process.memoryUsage.rss() - rss0
      // Y = x·ΣW[:, j] + b[j] with every x of the last run, read from the same array as before
      const last = (RUNS - 1) % 7
      expect(Y.data).toBe(out)
      const w = Float32Array.from({ length: 12 }, (_, i) => (i - 6) / 10)
      for (let j = 0; j < 3; j++) expect(Y.data[j]).toBeCloseTo(last * (w[j] + w[3 + j] + w[6 + j] + w[9 + j]) + [1, 2, 3][j], 4)
      expect(grown).toBeLessThan(16 * 1024 * 1024)
    } finally {
      binding.release()
      X.release()
      Y.release()
      session.release()
    }
  })

  it('wrong element counts, types and names are refused before the runtime sees them', () => {
    expect(() => NativeTensor.create(runtime, 'float32', [2, 4], new Float32Array(7))).toThrow(/needs 8 elements/)
    expect(() => NativeTensor.create(runtime, 'int64', [2], new Float32Array(2))).toThrow(/BigInt64Array/)
    expect(() => NativeTensor.create(runtime, 'string', [1])).toThrow(/does not move string/)
    expect(() => NativeTensor.create(runtime, 'float32', [-1, 2])).toThrow(/non-negative/)
    const session = EpSession.create(runtime, matmulAdd(2))
    try {
      expect(() => session.run({ Nope: NativeTensor.create(runtime, 'float32', [2, 4]) })).toThrow(/no input or output named "Nope"/)
      expect(() => session.run({ X: NativeTensor.create(runtime, 'float32', [3, 4]) })).toThrow(OrtCApiError)
    } finally {
      session.release()
    }
    expect(() => session.run({})).toThrow(/after release/)
  })
})
