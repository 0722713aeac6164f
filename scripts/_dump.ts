import * as ort from 'onnxruntime-node'
import onnxProto from 'onnx-proto'
import { readFileSync } from 'node:fs'
import { compileModel } from '../main/engine/graph'
import { randomModel } from '../test/graph/random-model'
const model = randomModel({ seed: 1, dim: 256, hiddenDim: 512, nHeads: 4, nKvHeads: 4, nLayers: 2, encoding: 'q4_0' })
await ort.InferenceSession.create(compileModel(model, { ropeTableLength: 64 }), { graphOptimizationLevel: 'all', optimizedModelFilePath: '/tmp/exp/opt.onnx' })
const m = onnxProto.onnx.ModelProto.decode(readFileSync('/tmp/exp/opt.onnx'))
const counts = new Map<string, number>()
for (const n of m.graph!.node!) counts.set(n.opType!, (counts.get(n.opType!) ?? 0) + 1)
console.log(m.graph!.node!.length, [...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}:${v}`).join(' '))
for (const n of m.graph!.node!.slice(0, 45)) console.log(n.opType, n.name, (n.attribute ?? []).map((a) => `${a.name}=${a.i ?? ''}`).join(','))
