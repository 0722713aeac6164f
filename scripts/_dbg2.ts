import { createSession, float32Tensor, int64Tensor, tensorFloat32Data } from '../main/engine/devices'
import { compileSegment, int8ActivationBlock, modelOpGroups, wholeModelSegment } from '../main/engine/graph'
import { createReferenceState, referenceForward } from '../main/engine/model/reference'
import { tensorToFloat32 } from '../main/engine/model'
import { randomModel } from '../test/graph/random-model'
const model = randomModel({ seed: 20, encoding: 'q8_0', dim: 256, hiddenDim: 512, nLayers: 1 })
const c = model.config
const prompt = [3, 17, 42, 5, 88, 1]
const spec = wholeModelSegment(c)
const session = await createSession(compileSegment(model, { ...spec, outputs: [...spec.outputs, 'final_in'] }, { ropeTableLength: 16 }), { device: 'cpu', intraOpThreads: 1 })
const S = prompt.length
const emb = tensorToFloat32(model.weights.tokenEmbedding)
const hidden = new Float32Array(S * c.dim)
prompt.forEach((t, i) => hidden.set(emb.subarray(t * c.dim, (t + 1) * c.dim), i * c.dim))
const out = await session.run({ hidden: float32Tensor(hidden, [1, S, c.dim]), positions: int64Tensor(BigInt64Array.from(prompt.map((_, i) => BigInt(i))), [S]),
  past_k_0: float32Tensor(new Float32Array(c.nKvHeads * c.headDim * 8), [c.nKvHeads, c.headDim, 8]), past_v_0: float32Tensor(new Float32Array(c.nKvHeads * c.headDim * 8), [c.nKvHeads, 8, c.headDim]) })
const fin = tensorFloat32Data(out.final_in, 'f')
// reference: hook final normalized x: rerun reference and capture x after final norm -> state.x
const state = createReferenceState(c, 16, { int8ActivationBlock: (t) => int8ActivationBlock(t, { ropeTableLength: 16 }) })
let want = new Float32Array(0)
for (let p = 0; p < S; p++) want = referenceForward(model, state, prompt[p], p)
let d = 0; for (let i = 0; i < c.dim; i++) d = Math.max(d, Math.abs(fin[i] - state.x[i]))
console.log('final_in max diff', d)
// quantization comparison per block
for (let blk = 0; blk < c.dim / 32; blk++) {
  const q = (x: Float32Array) => { let amax = 0; for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(x[blk * 32 + i])); const inv = Math.fround(127 / amax); return Array.from({ length: 32 }, (_, i) => Math.fround(x[blk * 32 + i] * inv)) }
  const a = q(fin), b = q(state.x)
  for (let i = 0; i < 32; i++) if (Math.round(a[i]) !== Math.round(b[i]) || Math.abs(a[i] - Math.round(a[i])) > 0.4999) console.log('blk', blk, 'i', i, a[i], b[i])
}
const logits = tensorFloat32Data(out.logits, 'l')
let dl = 0; for (let i = 0; i < want.length; i++) dl = Math.max(dl, Math.abs(logits[i] - want[i]))
console.log('logits diff', dl)
