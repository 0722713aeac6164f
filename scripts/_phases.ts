import { join } from 'node:path'
import { ensureBenchModel } from '../bench/models'
import { createSession, float32Tensor, int64Tensor, tensorFloat32Data } from '../main/engine/devices'
import { compileModel, KV_OUTPUT } from '../main/engine/graph'
import { dequantizeRows, loadModel } from '../main/engine/model'
import { KvCache } from '../main/engine/runtime/kv-cache'
import * as ort from 'onnxruntime-node'
const file = await ensureBenchModel('q4_0', join(import.meta.dirname, '..', 'bench', '.models'), console.log)
const m = await loadModel(file.path)
const model = { config: m.config, weights: m.weights! }
const c = model.config
const bytes = compileModel(model, { ropeTableLength: 256 })
const raw = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' })
const cache = new KvCache({ nLayers: c.nLayers, nKvHeads: c.nKvHeads, headDim: c.headDim, maxLen: 256 })
const hidden = new Float32Array(c.dim)
const pos = new BigInt64Array(1)
const t = { feeds: 0, run: 0, runSync: 0, post: 0, n: 0 }
const binding = (raw as unknown as { handler: { ['_OnnxruntimeSessionHandler_inferenceSession']: unknown } })
for (let step = 0; step < 60; step++) {
  const t0 = performance.now()
  dequantizeRows(model.weights.tokenEmbedding, 5 + step, 1, hidden, 0)
  pos[0] = BigInt(step)
  const cap = cache.capacity
  const feeds: Record<string, ort.Tensor> = { hidden: float32Tensor(hidden, [1, 1, c.dim]), positions: int64Tensor(pos, [1]) }
  for (let l = 0; l < c.nLayers; l++) { const p = cache.past(l); feeds[`past_k_${l}`] = float32Tensor(p.keys, [c.nKvHeads, c.headDim, cap]); feeds[`past_v_${l}`] = float32Tensor(p.values, [c.nKvHeads, cap, c.headDim]) }
  const t1 = performance.now()
  const out = await raw.run(feeds)
  const t2 = performance.now()
  const kv = tensorFloat32Data(out[KV_OUTPUT], 'kv')
  const block = c.nKvHeads * c.headDim
  cache.reserve(step + 1)
  for (let l = 0; l < c.nLayers; l++) cache.write(l, kv.subarray(2 * l * block, (2 * l + 1) * block), kv.subarray((2 * l + 1) * block, (2 * l + 2) * block), 1)
  cache.commit(1)
  const logits = tensorFloat32Data(out.logits, 'l').slice()
  const t3 = performance.now()
  if (step >= 10) { t.feeds += t1 - t0; t.run += t2 - t1; t.post += t3 - t2; t.n++ }
  if (logits.length === 0) throw new Error()
}
console.log(`per token: feeds ${(t.feeds / t.n * 1000).toFixed(0)} µs, run ${(t.run / t.n).toFixed(2)} ms, post ${(t.post / t.n * 1000).toFixed(0)} µs`)
