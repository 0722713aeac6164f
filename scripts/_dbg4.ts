import { compareWithReference } from '../test/graph/compare'
import { randomModel } from '../test/graph/random-model'
const SHAPE = { dim: 256, hiddenDim: 512, nHeads: 4, nKvHeads: 2, vocabSize: 97, nLayers: 2 }
const PROMPT = [3, 17, 42, 5, 88, 1, 60, 23]
for (const encoding of ['q8_0', 'q4_0', 'q4_k', 'q6_k', 'int8-groups'] as const) {
  for (const seed of [20, 21, 22]) {
    const model = randomModel({ seed, ...SHAPE, encoding })
    const e = await compareWithReference(model, PROMPT, 8)
    const p = await compareWithReference(model, PROMPT, 8, { emulateInt8: false })
    const f = await compareWithReference(model, PROMPT, 8, { int8Activations: false })
    console.log(`${encoding} seed ${seed}: scale ${e.logitScale.toFixed(1)} | int8 vs emulated ${e.stepDiffs.map((d) => (d / e.logitScale).toExponential(0)).join(' ')} top1 ${e.top1Equal} | int8 vs plain max ${(p.maxAbsDiff / p.logitScale).toExponential(1)} top1 ${p.top1Equal} | f32 graph vs plain ${(f.maxAbsDiff / f.logitScale).toExponential(1)}`)
  }
}
