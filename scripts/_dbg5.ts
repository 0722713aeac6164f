import * as ort from 'onnxruntime-node'
import { GraphBuilder } from '../main/engine/graph/onnx-builder'
import { EmitContext } from '../main/engine/graph/emit-context'
import { emitLinears, int8ActivationPlan } from '../main/engine/graph/linear'
import { packNBits, unpackNBits } from '../main/engine/graph/quant-pack'
import { roundToInt8Blocks } from '../main/engine/model/reference'
import { tensorToFloat32 } from '../main/engine/model'
import { randomModel } from '../test/graph/random-model'
const model = randomModel({ seed: 20, encoding: 'q4_k', dim: 256, hiddenDim: 512, nLayers: 1 })
const L0 = model.weights.layers[0]
const ws = [L0.wGate, L0.wUp]
const w = ws[1]
const [N, K] = w.shape
const b = new GraphBuilder('t')
const ctx = new EmitContext(b, model.config, model.weights, { ropeTableLength: 4 })
b.input('x', 'float32', [1, 1, K])
b.node('Identity', [emitLinears(ctx, 'x', ws, ws.map(() => null), ws.map((_, i) => 'l' + i))[1]], { outputs: ['y'] })
b.output('y', 'float32', [1, 1, N])
const s = await ort.InferenceSession.create(b.toBytes('t'))
const x = Float32Array.from({ length: K }, () => Math.random() * 2 - 1)
const y = (await s.run({ x: new ort.Tensor('float32', x, [1, 1, K]) })).y.data as Float32Array
const W = tensorToFloat32(w)
const Wu = unpackNBits(packNBits(w)!)
let dw = 0; for (let i = 0; i < W.length; i++) dw = Math.max(dw, Math.abs(W[i] - Wu[i])); console.log('unpack vs dequant', dw)
const plan = int8ActivationPlan(w, { ropeTableLength: 4 })!
const xq = roundToInt8Blocks(new Float32Array(K), x, K, plan.block)
let e1 = 0, e2 = 0
for (let n = 0; n < N; n++) {
  let a = 0, p = 0; for (let k = 0; k < K; k++) { a += W[n * K + k] * xq[k]; p += W[n * K + k] * x[k] }
  let corr = 0; for (let bb = 0; bb < K / 32; bb++) { let sh = 0; for (let k = bb * 32; k < bb * 32 + 32; k++) sh += xq[k] - x[k]; corr += plan.minsT![bb * N + n] * sh }
  e1 = Math.max(e1, Math.abs(y[n] - (a + corr))); e2 = Math.max(e2, Math.abs(y[n] - p))
}
console.log('vs emulated', e1, 'vs plain', e2, 'minsT len', plan.minsT!.length, N * K / 32)
