import { describe, expect, it } from 'vitest'
import {
  createSession,
  EP_CATALOG,
  float32Tensor,
  listSupportedBackends,
  ortVersion,
  tensorFloat32Data
} from '../../main/engine/devices'
import { GraphBuilder } from '../../main/engine/graph/onnx-builder'

/** y = x · W for a fixed 3×2 W, dynamic batch. */
function tinyModel(): Uint8Array {
  const b = new GraphBuilder('tiny')
  b.input('x', 'float32', ['batch', 3])
  const w = b.f32('w', [3, 2], Float32Array.of(1, 2, 3, 4, 5, 6))
  b.node('MatMul', ['x', w], { outputs: ['y'] })
  b.output('y', 'float32', ['batch', 2])
  return b.toBytes('test')
}

describe('onnxruntime gate (devices/ort.ts)', () => {
  it('reports the bundled CPU backend and the runtime version', () => {
    expect(listSupportedBackends()).toContainEqual({ name: 'cpu', bundled: true })
    expect(ortVersion()).toMatch(/^1\.\d+\.\d+/)
  })

  it('checks every session against the one frozen execution-provider table (the EP catalog)', () => {
    expect(Object.isFrozen(EP_CATALOG)).toBe(true)
    expect(Object.keys(EP_CATALOG).sort()).toEqual(['coreml', 'cpu', 'cuda', 'dml', 'qnn', 'tensorrt', 'webgpu'])
  })

  it('runs a session built from bytes, with inputs passed as subarray views', async () => {
    const s = await createSession(tinyModel(), { ep: 'cpu', intraOpThreads: 1, interOpThreads: 1, optimizationLevel: 'all' })
    try {
      expect(s.inputNames).toEqual(['x'])
      const big = Float32Array.of(9, 9, 1, 0, 0, 0, 1, 0, 9)
      const out = await s.run({ x: float32Tensor(big.subarray(2, 8), [2, 3]) })
      expect([...tensorFloat32Data(out.y, 'y')]).toEqual([1, 2, 3, 4])
    } finally {
      await s.release()
    }
  })

  it('refuses an unknown execution provider listing the valid names, and bad thread counts', async () => {
    await expect(createSession(tinyModel(), { ep: 'warp-drive' })).rejects.toThrow("unknown execution provider 'warp-drive'; valid: cpu, webgpu, dml, coreml, qnn, cuda, tensorrt")
    await expect(createSession(tinyModel(), { ep: 'cpu', intraOpThreads: -1 })).rejects.toThrow(RangeError)
    await expect(createSession(tinyModel(), { ep: 'cpu', interOpThreads: 1.5 })).rejects.toThrow(RangeError)
  })
})
