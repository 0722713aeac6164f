import { describe, expect, it } from 'vitest'
import {
  createSession,
  DEVICE_TO_EXECUTION_PROVIDER,
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

  it('keeps one frozen device -> execution provider table', () => {
    expect(Object.isFrozen(DEVICE_TO_EXECUTION_PROVIDER)).toBe(true)
    expect(Object.keys(DEVICE_TO_EXECUTION_PROVIDER).sort()).toEqual(['coreml', 'cpu', 'cuda', 'dml', 'qnn', 'webgpu'])
  })

  it('runs a session built from bytes, with inputs passed as subarray views', async () => {
    const s = await createSession(tinyModel(), { device: 'cpu', intraOpThreads: 1, interOpThreads: 1, optimizationLevel: 'all' })
    try {
      expect(s.inputNames).toEqual(['x'])
      const big = Float32Array.of(9, 9, 1, 0, 0, 0, 1, 0, 9)
      const out = await s.run({ x: float32Tensor(big.subarray(2, 8), [2, 3]) })
      expect([...tensorFloat32Data(out.y, 'y')]).toEqual([1, 2, 3, 4])
    } finally {
      await s.release()
    }
  })

  it('refuses devices without session support and bad thread counts, naming what is allowed', async () => {
    await expect(createSession(tinyModel(), { device: 'webgpu' })).rejects.toThrow(/not supported for sessions yet; supported: cpu/)
    await expect(createSession(tinyModel(), { device: 'cpu', intraOpThreads: -1 })).rejects.toThrow(RangeError)
  })
})
