/**
 * @file W8A8 and llm.npu's shadow outlier execution against plain float arithmetic: the shadow's identity
 * (NPU int8 product of the clipped activation + the shadow's float product of the remainder = the product without
 * clipping), calibration finding a model's injected outlier channels as its hot channels, and the shadow taking back
 * what clipping costs a whole forward pass of that model.
 */
import { describe, expect, it } from 'vitest'
import { calibrate, forEachPosition, layerMatmuls, shadowLayers, w8a8Linears, w8a8Reference, type W8A8Setup } from '../../main/engine/model/calibrate'
import { activationSteps, dequantizePerChannel, makeShadow, quantizeActivation, quantizePerChannel, w8a8Linear, type W8A8Linear } from '../../main/engine/model/w8a8'
import { Agreement, logSoftmax } from '../../eval/metrics'
import { outlierModel } from '../fixtures/outlier-model'
import { Rng } from '../fixtures/rng'

const ROWS = 24
const COLS = 48

function randomWeight(seed: number): Float32Array {
  const rng = new Rng(seed)
  return Float32Array.from({ length: ROWS * COLS }, () => rng.normal() * 0.05)
}

/** An activation with ordinary values and a few outliers (channels 3, 17, 40 clip at scale 0.02). */
function activation(): Float32Array {
  const rng = new Rng(9)
  const x = Float32Array.from({ length: COLS }, () => rng.normal() * 0.5)
  x[3] = 31.7
  x[17] = -12.2
  x[40] = 7.9
  return x
}

/** Σ_k W̃[i,k] · sx · round(x_k / sx): the W8A8 product as if nothing clipped, in float64. */
function unclipped(lin: W8A8Linear, x: Float32Array): Float64Array {
  const w = dequantizePerChannel(lin.weight)
  const s = lin.activationScale
  return Float64Array.from({ length: ROWS }, (_, i) => {
    let y = 0
    for (let k = 0; k < COLS; k++) y += w[i * COLS + k] * s * activationSteps(x[k], s)
    return y
  })
}

describe('W8A8 with the shadow', () => {
  const weight = quantizePerChannel(randomWeight(1), ROWS, COLS)
  const x = activation()
  const scale = 0.02

  it('saturates the outliers to the int8 range, as QuantizeLinear does, and keeps what they lose as the remainder', () => {
    const a = quantizeActivation(x, scale)
    expect(a.clipped).toEqual([3, 17, 40])
    expect(a.xq[3]).toBe(127)
    expect(a.xq[17]).toBe(-128)
    expect(a.remainder[3]).toBeCloseTo(scale * (Math.round(31.7 / scale) - 127), 4)
    expect(a.remainder[5]).toBe(0)
  })

  it('int8 of the clipped activation + the shadow = the product without clipping, to float tolerance', () => {
    const want = unclipped({ weight, activationScale: scale, shadow: null }, x)
    const out = new Float32Array(ROWS)
    // hot channels 3 and 17; 40 is a cold outlier, repaired by the float fallback
    const run = w8a8Linear(out, x, { weight, activationScale: scale, shadow: makeShadow(weight, [17, 3]) })
    expect(run).toEqual({ clipped: 3, repairedHot: 2, repairedCold: 1 })
    for (let i = 0; i < ROWS; i++) expect(out[i]).toBeCloseTo(want[i], 4)

    // without the fallback the cold outlier stays clipped; without any shadow all three do
    const noFallback = new Float32Array(ROWS)
    expect(w8a8Linear(noFallback, x, { weight, activationScale: scale, shadow: makeShadow(weight, [3, 17], false) })).toEqual({ clipped: 3, repairedHot: 2, repairedCold: 0 })
    const none = new Float32Array(ROWS)
    w8a8Linear(none, x, { weight, activationScale: scale, shadow: null })
    const err = (y: Float32Array): number => Math.max(...Array.from(y, (v, i) => Math.abs(v - want[i])))
    expect(err(noFallback)).toBeGreaterThan(1e-3)
    expect(err(none)).toBeGreaterThan(err(noFallback))
  })

  it('the int8 part is exact integer arithmetic: without outliers it equals the quantized float product', () => {
    const ordinary = activation().map((v, k) => ([3, 17, 40].includes(k) ? 0.1 : v))
    const out = new Float32Array(ROWS)
    expect(w8a8Linear(out, ordinary, { weight, activationScale: scale, shadow: null }).clipped).toBe(0)
    const want = unclipped({ weight, activationScale: scale, shadow: null }, ordinary)
    for (let i = 0; i < ROWS; i++) expect(out[i]).toBeCloseTo(want[i], 5)
  })
})

describe('calibration and the shadow on a model with outlier channels', () => {
  const model = outlierModel({ seed: 21, dim: 64, hiddenDim: 128, nLayers: 3, nHeads: 4, nKvHeads: 2, vocabSize: 96, contextLength: 64 }, { channels: 2, minFactor: 30, maxFactor: 60 })
  const rng = new Rng(5)
  const tokens = Array.from({ length: 40 }, () => Math.floor(rng.uniform() * model.config.vocabSize))
  const calibration = calibrate(model, [tokens])

  it('finds the injected channels as the hot channels of the matmuls that read them, and scores every layer', () => {
    const q = calibration.matmuls[model.weights.layers[0].wq.name]
    expect(q.hotChannels.length).toBeLessThanOrEqual(Math.ceil(0.03 * 64))
    expect([...q.hotChannels].sort((a, b) => a - b)).toEqual(model.outlierChannels)
    expect(q.hotOutlierShare).toBe(1)
    expect(calibration.matmuls[model.weights.layers[1].wGate.name].hotChannels.length).toBeGreaterThan(0)
    expect(calibration.layerImportance).toHaveLength(3)
    for (const v of calibration.layerImportance) expect(v).toBeGreaterThan(0)
    expect(shadowLayers(calibration, 0).size).toBe(3)
    expect(shadowLayers(calibration, 100).size).toBe(0)
  })

  function evaluate(setup: W8A8Setup | null): Agreement['result'] {
    const float: Float64Array[] = []
    forEachPosition(model, tokens, {}, (_, logits) => float.push(logSoftmax(logits)))
    const linears = setup === null ? null : w8a8Linears(model, calibration, setup)
    const agreement = new Agreement()
    forEachPosition(
      model,
      tokens,
      linears === null ? {} : w8a8Reference(linears),
      (pos, logits) => agreement.add(float[pos], logSoftmax(logits), pos + 1 < tokens.length ? tokens[pos + 1] : null)
    )
    return agreement.result
  }

  it('the shadow takes back what per-tensor int8 loses; pruned everywhere it is plain W8A8', () => {
    const plain = evaluate({ shadow: false, prunedPercent: 0 })
    const shadow = evaluate({ shadow: true, prunedPercent: 0 })
    const allPruned = evaluate({ shadow: true, prunedPercent: 100 })
    expect(plain.kl).toBeGreaterThan(0)
    expect(shadow.kl).toBeLessThan(plain.kl / 2)
    expect(allPruned).toEqual(plain)
    expect(layerMatmuls(model.weights).size).toBe(3 * 7)
  })
})
