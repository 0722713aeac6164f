/**
 * @file The shadow graphs (graph/shadow.ts), run by onnxruntime on the CPU: for every stage of a layer, the NPU's
 * clipped int8 product plus the shadow graph's correction equals model/w8a8.ts's unclipped quantized product
 * (hot channels and the cold fallback) — with outliers in hot channels, in cold ones, and none at all.
 */
import { describe, expect, it } from 'vitest'
import { createCpuSession, float32Tensor, tensorFloat32Data } from '../../main/engine/devices'
import { compileShadow, SHADOW_STAGES, shadowIo, shadowWeights, type ShadowStage } from '../../main/engine/graph'
import { calibrate, makeShadow, quantizeTensorPerChannel, w8a8Linear } from '../../main/engine/model'
import { outlierModel } from '../fixtures/outlier-model'
import { Rng } from '../fixtures/rng'

const model = outlierModel({ seed: 5, dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 80, contextLength: 32 }, { channels: 2, minFactor: 20, maxFactor: 60 })
const rng = new Rng(9)
const calibration = calibrate(model, [Array.from({ length: 24 }, () => 1 + Math.floor(rng.uniform() * 79))])
const scales = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.scale]))
const LAYER = 1
const ROWS = 5

/** x [ROWS, k]: ordinary values within the scale, and `outliers` as [row, channel, multiple of the clip level]. */
function activations(k: number, scale: number, outliers: ReadonlyArray<readonly [number, number, number]>): Float32Array {
  const x = new Float32Array(ROWS * k)
  for (let i = 0; i < x.length; i++) x[i] = (rng.uniform() * 2 - 1) * 100 * scale
  for (const [r, c, m] of outliers) x[r * k + c] = m * 127 * scale
  return x
}

/** What the NPU plus its shadow must give for each weight of a stage: w8a8Linear with the hot channels and the cold fallback. */
function expected(stage: ShadowStage, x: Float32Array, k: number): { npu: Float32Array[]; exact: Float32Array[] } {
  const npu: Float32Array[] = []
  const exact: Float32Array[] = []
  for (const { tensor, factor } of shadowWeights(model.config, model.weights, LAYER, stage)) {
    const weight = quantizeTensorPerChannel(tensor)
    const activationScale = scales[tensor.name]
    const shadow = makeShadow(weight, calibration.matmuls[tensor.name].hotChannels, true)
    const a = new Float32Array(ROWS * weight.rows)
    const b = new Float32Array(ROWS * weight.rows)
    for (let r = 0; r < ROWS; r++) {
      const row = x.subarray(r * k, (r + 1) * k)
      w8a8Linear(a.subarray(r * weight.rows, (r + 1) * weight.rows), row, { weight, activationScale, shadow: null })
      w8a8Linear(b.subarray(r * weight.rows, (r + 1) * weight.rows), row, { weight, activationScale, shadow })
    }
    npu.push(a.map((v) => v * factor))
    exact.push(b.map((v) => v * factor))
  }
  return { npu, exact }
}

async function runShadow(stage: ShadowStage, x: Float32Array, k: number): Promise<Float32Array[]> {
  const hot = Object.fromEntries(shadowWeights(model.config, model.weights, LAYER, stage).map(({ tensor }) => [tensor.name, calibration.matmuls[tensor.name].hotChannels]))
  const bytes = compileShadow(model, { layer: LAYER, stage, hot }, { ropeTableLength: 32, w8a8: scales })
  const session = await createCpuSession(bytes, { intraOpThreads: 1 })
  try {
    const io = shadowIo(LAYER, stage)
    const out = await session.run({ [io.input]: float32Tensor(x, [1, ROWS, k]) })
    return io.outputs.map((name) => tensorFloat32Data(out[name], name).slice())
  } finally {
    await session.release()
  }
}

describe('shadow graphs', () => {
  for (const stage of SHADOW_STAGES) {
    it(`${stage}: the NPU's clipped product + the shadow graph = the unclipped quantized product`, async () => {
      const [first] = shadowWeights(model.config, model.weights, LAYER, stage)
      const k = first.tensor.shape[1]
      const scale = scales[first.tensor.name]
      const hot = calibration.matmuls[first.tensor.name].hotChannels
      const cold = Array.from({ length: k }, (_, c) => c).find((c) => !hot.includes(c)) ?? 0
      const cases: Array<ReadonlyArray<readonly [number, number, number]>> = [[], [[1, cold, 9], [3, cold, -4]]]
      if (hot.length > 0) cases.push([[0, hot[0], 30], [2, hot[0], -12], [4, cold, 3]])
      for (const outliers of cases) {
        const x = activations(k, scale, outliers)
        const { npu, exact } = expected(stage, x, k)
        const got = await runShadow(stage, x, k)
        // ffn-up writes gate and up corrections side by side, row by row
        const corrections = stage === 'ffn-up' ? splitRows(got[0], ROWS, npu[0].length / ROWS) : got
        corrections.forEach((c, i) => {
          let worst = 0
          let scaleOut = 0
          let moved = 0
          for (let j = 0; j < c.length; j++) {
            worst = Math.max(worst, Math.abs(npu[i][j] + c[j] - exact[i][j]))
            scaleOut = Math.max(scaleOut, Math.abs(exact[i][j]))
            moved = Math.max(moved, Math.abs(exact[i][j] - npu[i][j]))
          }
          expect(worst).toBeLessThanOrEqual(1e-5 * scaleOut)
          // the cases with outliers are ones clipping changes; without, the shadow adds exactly nothing
          if (outliers.length === 0) expect(c.every((v) => v === 0)).toBe(true)
          else expect(moved).toBeGreaterThan(1e-3 * scaleOut)
        })
      }
    })
  }

  it('refuses to compile without the activation scales', () => {
    expect(() => compileShadow(model, { layer: 0, stage: 'qkv', hot: {} }, { ropeTableLength: 32 })).toThrow(/W8A8 activation scales/)
  })
})

/** [rows, 2n] side by side → the two [rows, n] halves. */
function splitRows(v: Float32Array, rows: number, n: number): Float32Array[] {
  const a = new Float32Array(rows * n)
  const b = new Float32Array(rows * n)
  for (let r = 0; r < rows; r++) {
    a.set(v.subarray(r * 2 * n, r * 2 * n + n), r * n)
    b.set(v.subarray(r * 2 * n + n, (r + 1) * 2 * n), r * n)
  }
  return [a, b]
}
