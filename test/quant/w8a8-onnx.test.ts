/**
 * @file The W8A8 arithmetic of w8a8.ts is ONNX Runtime's: a graph of QuantizeLinear → MatMulInteger → Cast →
 * Mul (what an integer NPU segment runs) gives exactly the emulation's numbers, on the CPU provider and on the
 * virtual NPU (whose counters show it took that part); the shadow written as ONNX ops beside it (the remainder
 * round(x/sx) − xq, times sx, times the float weight) restores the product without clipping, as in the emulation.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { createSession, EpSession, NativeTensor, OrtCRuntime, registerVirtualNpu, tensorFloat32Data, VIRTUAL_NPU_EP, virtualNpuStats, float32Tensor, type RegisteredLibrary } from '../../main/engine/devices'
import { GraphBuilder } from '../../main/engine/graph'
import { dequantizePerChannel, makeShadow, quantizePerChannel, w8a8Linear, w8a8OutputScales, type W8A8Linear } from '../../main/engine/model'
import { compilerSkipReason } from '../devices/compiler'
import { Rng } from '../fixtures/rng'

const ROWS = 40
const COLS = 64
const TOKENS = 8
const SX = 0.015

const rng = new Rng(17)
const weight = quantizePerChannel(Float32Array.from({ length: ROWS * COLS }, () => rng.normal() * 0.04), ROWS, COLS)
/** [TOKENS, COLS] activations with outliers in channels 5 and 33, and exact .5 steps to test the rounding. */
const X = Float32Array.from({ length: TOKENS * COLS }, (_, i) => {
  const k = i % COLS
  if (k === 5) return 4 + (i / COLS) * 1.7
  if (k === 33) return -3.1
  if (k === 9) return SX * 2.5
  return rng.normal() * 0.4
})

/** y = W8A8(x) (the NPU part), and y + shadow (the whole product) with every channel's remainder, in ONNX. */
function graph(): Uint8Array {
  const b = new GraphBuilder('w8a8')
  const x = b.input('X', 'float32', [TOKENS, COLS])
  const sx = b.f32('sx', [], Float32Array.of(SX))
  const zero = b.initializer('zero', 'int8', [], new Uint8Array(1))
  const q = b.op('QuantizeLinear', [x, sx, zero])
  const wqT = new Int8Array(COLS * ROWS)
  for (let i = 0; i < ROWS; i++) for (let k = 0; k < COLS; k++) wqT[k * ROWS + i] = weight.values[i * COLS + k]
  const acc = b.op('MatMulInteger', [q, b.initializer('WqT', 'int8', [COLS, ROWS], new Uint8Array(wqT.buffer))])
  const scale = b.f32('scale', [ROWS], w8a8OutputScales({ weight, activationScale: SX }))
  b.node('Mul', [b.op('Cast', [acc], { attrs: { to: { int: 1 } } }), scale], { outputs: ['Ynpu'] })
  // shadow: (round(x / sx) − xq) · sx · W̃ᵀ, on whatever device takes it
  const steps = b.op('Round', [b.op('Div', [x, sx])])
  const remainder = b.op('Mul', [b.op('Sub', [steps, b.op('Cast', [q], { attrs: { to: { int: 1 } } })]), sx])
  const wT = new Float32Array(COLS * ROWS)
  const w = dequantizePerChannel(weight)
  for (let i = 0; i < ROWS; i++) for (let k = 0; k < COLS; k++) wT[k * ROWS + i] = w[i * COLS + k]
  b.node('Add', ['Ynpu', b.op('MatMul', [remainder, b.f32('WT', [COLS, ROWS], wT)])], { outputs: ['Y'] })
  b.output('Ynpu', 'float32', [TOKENS, ROWS])
  b.output('Y', 'float32', [TOKENS, ROWS])
  return b.toBytes('w8a8')
}

function emulate(lin: W8A8Linear): Float32Array {
  const out = new Float32Array(TOKENS * ROWS)
  for (let t = 0; t < TOKENS; t++) w8a8Linear(out.subarray(t * ROWS, (t + 1) * ROWS), X.subarray(t * COLS, (t + 1) * COLS), lin)
  return out
}

const npuPart = emulate({ weight, activationScale: SX, shadow: null })
const whole = emulate({ weight, activationScale: SX, shadow: makeShadow(weight, [5]) })

describe('W8A8 in ONNX', () => {
  it('on the CPU provider: the NPU part equals the emulation bit for bit, and with the shadow the whole product', async () => {
    const session = await createSession(graph(), { ep: 'cpu', intraOpThreads: 1 })
    try {
      const out = await session.run({ X: float32Tensor(X, [TOKENS, COLS]) })
      expect(tensorFloat32Data(out.Ynpu, 'Ynpu')).toEqual(npuPart)
      const y = tensorFloat32Data(out.Y, 'Y')
      for (let i = 0; i < y.length; i++) expect(y[i]).toBeCloseTo(whole[i], 4)
      // the outliers really clipped: without the shadow the product is off
      expect(Math.max(...Array.from(npuPart, (v, i) => Math.abs(v - whole[i])))).toBeGreaterThan(0.01)
    } finally {
      await session.release()
    }
  })
})

describe.skipIf(compilerSkipReason !== null)('W8A8 on the virtual NPU', () => {
  const runtime = OrtCRuntime.open()
  let npu: RegisteredLibrary
  beforeAll(async () => {
    npu = await registerVirtualNpu(runtime)
  }, 180_000)

  it('takes QuantizeLinear, MatMulInteger, Cast and Mul (its counters), with the same numbers', () => {
    const before = virtualNpuStats(npu.path)
    // the shadow's Round is not an NPU op: it falls to the CPU provider, as the shadow should
    const session = EpSession.create(runtime, graph(), { device: { epName: VIRTUAL_NPU_EP }, cpuFallback: true })
    const x = NativeTensor.create(runtime, 'float32', [TOKENS, COLS], X)
    try {
      const out = session.run({ X: x })
      const after = virtualNpuStats(npu.path)
      expect(after.graphRuns - before.graphRuns).toBeGreaterThan(0)
      expect(after.nodesClaimed - before.nodesClaimed).toBeGreaterThanOrEqual(4)
      expect(out.Ynpu.data).toEqual(npuPart)
    } finally {
      x.release()
      session.release()
    }
  })
})
