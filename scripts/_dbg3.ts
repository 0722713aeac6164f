import { createSession, float32Tensor, int64Tensor, tensorFloat32Data } from '../main/engine/devices'
import { compileSegment, wholeModelSegment } from '../main/engine/graph'
import { tensorToFloat32 } from '../main/engine/model'
import { randomModel } from '../test/graph/random-model'
const model = randomModel({ seed: 20, encoding: (process.argv[2] ?? 'q8_0') as 'q8_0', dim: 256, hiddenDim: 512, nLayers: 1 })
const c = model.config
const prompt = [3, 17, 42, 5, 88, 1]
const spec = wholeModelSegment(c)
const extra = ['attn_in_0', 'attn_0', 'resid_attn_0', 'ffn_in_0', 'resid_0']
const session = await createSession(compileSegment(model, { ...spec, outputs: [...spec.outputs, ...extra] }, { ropeTableLength: 16 }), { device: 'cpu', intraOpThreads: 1 })
const S = prompt.length
const emb = tensorToFloat32(model.weights.tokenEmbedding)
const hidden = new Float32Array(S * c.dim)
prompt.forEach((t, i) => hidden.set(emb.subarray(t * c.dim, (t + 1) * c.dim), i * c.dim))
const out = await session.run({ hidden: float32Tensor(hidden, [1, S, c.dim]), positions: int64Tensor(BigInt64Array.from(prompt.map((_, i) => BigInt(i))), [S]),
  past_k_0: float32Tensor(new Float32Array(c.nKvHeads * c.headDim * 8), [c.nKvHeads, c.headDim, 8]), past_v_0: float32Tensor(new Float32Array(c.nKvHeads * c.headDim * 8), [c.nKvHeads, 8, c.headDim]) })
const get = (n: string) => tensorFloat32Data(out[n], n)
const rne = (v: number) => { const f = Math.floor(v); const d = v - f; return d > 0.5 || (d === 0.5 && f % 2 !== 0) ? f + 1 : f }
const quant = (x: Float32Array, bs: number) => { const o = new Float64Array(x.length); for (let s = 0; s < x.length; s += bs) { let a = 0; for (let i = s; i < s + bs; i++) a = Math.max(a, Math.abs(x[i])); const sc = Math.fround(a / 127), inv = a ? Math.fround(127 / a) : 0; for (let i = s; i < s + bs; i++) o[i] = rne(Math.fround(x[i] * inv)) * sc } return o }
const mm = (x: Float64Array, w: Float32Array, n: number, d: number) => { const o = new Float64Array(d); for (let i = 0; i < d; i++) { let s = 0; for (let j = 0; j < n; j++) s += w[i * n + j] * x[j]; o[i] = s } return o }
const L = model.weights.layers[0]
import { int8ActivationPlan as planOf } from '../main/engine/graph'
import type { Tensor } from '../main/engine/model'
const lin = (x: Float32Array, t: Tensor, n: number, d: number) => {
  const plan = planOf(t, { ropeTableLength: 16 })!
  const xq = quant(x, plan.block)
  const o = mm(xq, tensorToFloat32(t), n, d)
  if (plan.minsT) for (let bb = 0; bb < n / plan.block; bb++) { let sh = 0; for (let k = bb * plan.block; k < (bb + 1) * plan.block; k++) sh += xq[k] - x[k]; for (let i = 0; i < d; i++) o[i] += plan.minsT[bb * d + i] * sh }
  return o
}
for (let row = 0; row < S; row++) {
  const attn = get('attn_0').subarray(row * c.dim, (row + 1) * c.dim)
  const residAttn = get('resid_attn_0').subarray(row * c.dim, (row + 1) * c.dim)
  const o = lin(attn, L.wo, c.dim, c.dim)
  let d1 = 0; for (let i = 0; i < c.dim; i++) d1 = Math.max(d1, Math.abs(hidden[row * c.dim + i] + o[i] - residAttn[i]))
  const ffnIn = get('ffn_in_0').subarray(row * c.dim, (row + 1) * c.dim)
  const g = lin(ffnIn, L.wGate, c.dim, c.hiddenDim), u = lin(ffnIn, L.wUp, c.dim, c.hiddenDim)
  const h = new Float32Array(c.hiddenDim); for (let i = 0; i < c.hiddenDim; i++) h[i] = g[i] / (1 + Math.exp(-g[i])) * u[i]
  const dn = lin(h, L.wDown, c.hiddenDim, c.dim)
  const res = get('resid_0').subarray(row * c.dim, (row + 1) * c.dim)
  let d2 = 0; for (let i = 0; i < c.dim; i++) d2 = Math.max(d2, Math.abs(residAttn[i] + dn[i] - res[i]))
  console.log(`row ${row}: wo+resid err ${d1.toExponential(2)}  ffn err ${d2.toExponential(2)}`)
}
// attention check from graph's attn_in
{
  const hd = c.headDim, nH = c.nHeads, nKv = c.nKvHeads, g = nH / nKv
  const inv = new Float64Array(hd / 2); for (let j = 0; j < hd / 2; j++) inv[j] = Math.pow(c.ropeTheta, -2 * j / hd)
  const Q: Float64Array[] = [], K: Float64Array[] = [], V: Float64Array[] = []
  for (let row = 0; row < S; row++) {
    const x = get('attn_in_0').subarray(row * c.dim, (row + 1) * c.dim)
    const q = lin(x, L.wq, c.dim, nH * hd), k = lin(x, L.wk, c.dim, nKv * hd), v = lin(x, L.wv, c.dim, nKv * hd)
    for (const [vec, n] of [[q, nH], [k, nKv]] as const) for (let h = 0; h < n; h++) for (let j = 0; j < hd / 2; j++) {
      const a = h * hd + 2 * j, b2 = a + 1, cs = Math.cos(row * inv[j]), sn = Math.sin(row * inv[j])
      const v0 = vec[a], v1 = vec[b2]; vec[a] = v0 * cs - v1 * sn; vec[b2] = v0 * sn + v1 * cs
    }
    Q.push(q); K.push(k); V.push(v)
  }
  for (let row = 0; row < S; row++) {
    const o = new Float64Array(nH * hd)
    for (let h = 0; h < nH; h++) {
      const kv = Math.floor(h / g)
      const sc = Array.from({ length: row + 1 }, (_, t) => { let s = 0; for (let i = 0; i < hd; i++) s += Q[row][h * hd + i] * K[t][kv * hd + i]; return s / Math.sqrt(hd) })
      const m = Math.max(...sc); const e = sc.map((s) => Math.exp(s - m)); const z = e.reduce((a, b) => a + b)
      for (let i = 0; i < hd; i++) { let s = 0; for (let t = 0; t <= row; t++) s += e[t] / z * V[t][kv * hd + i]; o[h * hd + i] = s }
    }
    const ga = get('attn_0').subarray(row * nH * hd, (row + 1) * nH * hd)
    let d = 0; for (let i = 0; i < nH * hd; i++) d = Math.max(d, Math.abs(o[i] - ga[i]))
    console.log(`row ${row}: attention err ${d.toExponential(2)}`)
  }
}
{
  const res = get('resid_0').subarray((S - 1) * c.dim, S * c.dim)
  const w = tensorToFloat32(model.weights.finalNorm)
  let ss = 0; for (let i = 0; i < c.dim; i++) ss += res[i] * res[i]
  const sc = 1 / Math.sqrt(ss / c.dim + c.normEps)
  const fin = new Float32Array(c.dim); for (let i = 0; i < c.dim; i++) fin[i] = w[i] * sc * res[i]
  const logits = lin(fin, model.weights.output, c.dim, c.vocabSize)
  const gl = get('logits')
  let d = 0; for (let i = 0; i < c.vocabSize; i++) d = Math.max(d, Math.abs(logits[i] - gl[i]))
  console.log('manual final norm + lm head vs graph logits', d.toExponential(2))
  const { createReferenceState, referenceForward } = await import('../main/engine/model/reference')
  const { int8ActivationBlock } = await import('../main/engine/graph')
  const state = createReferenceState(c, 16, { int8Activations: (t) => planOf(t, { ropeTableLength: 16 }) })
  let want = new Float32Array(0)
  for (let p = 0; p < S; p++) want = referenceForward(model, state, prompt[p], p)
  let d2 = 0; for (let i = 0; i < c.vocabSize; i++) d2 = Math.max(d2, Math.abs(logits[i] - want[i]))
  console.log('manual vs reference', d2.toExponential(2))
  let d3 = 0; for (let i = 0; i < c.dim; i++) d3 = Math.max(d3, Math.abs(fin[i] - state.x[i]))
  console.log('manual final_in vs reference final x', d3.toExponential(2))
}
{
  // end-to-end manual row 5 from the embedding, compared stage by stage to the graph
  const row = S - 1, hd = c.headDim, nH = c.nHeads, nKv = c.nKvHeads, g = nH / nKv
  const norm = (x: ArrayLike<number>, w: Float32Array) => { let ss = 0; for (let i = 0; i < c.dim; i++) ss += x[i] * x[i]; const sc = 1 / Math.sqrt(ss / c.dim + c.normEps); return Float32Array.from({ length: c.dim }, (_, i) => w[i] * (sc * x[i])) }
  const diff = (a: ArrayLike<number>, b: ArrayLike<number>) => { let d = 0; for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i])); return d.toExponential(2) }
  const x0 = hidden.subarray(row * c.dim, (row + 1) * c.dim)
  const ai = norm(x0, tensorToFloat32(L.attnNorm))
  console.log('attn_in', diff(ai, get('attn_in_0').subarray(row * c.dim, (row + 1) * c.dim)))
  const qa = quant(ai, 32), qb = quant(get('attn_in_0').subarray(row * c.dim, (row + 1) * c.dim), 32)
  console.log('attn_in quant', diff(qa, qb))
}
{
  const { createReferenceState, referenceForward } = await import('../main/engine/model/reference')
  const { int8ActivationBlock } = await import('../main/engine/graph')
  const state = createReferenceState(c, 16, { int8Activations: (t) => planOf(t, { ropeTableLength: 16 }) })
  for (let p = 0; p < S; p++) {
    referenceForward(model, state, prompt[p], p)
    const ra = (globalThis as Record<string, unknown>).__dbg_residAttn as Float32Array
    const g = get('resid_attn_0').subarray(p * c.dim, (p + 1) * c.dim)
    let d = 0; for (let i = 0; i < c.dim; i++) d = Math.max(d, Math.abs(ra[i] - g[i]))
    console.log('pos', p, 'resid_attn ref vs graph', d.toExponential(2))
    const kk = (globalThis as Record<string, unknown>).__dbg_k as Float32Array
    const km = lin(get('attn_in_0').subarray(p * c.dim, (p + 1) * c.dim), L.wk, c.dim, c.nKvHeads * c.headDim)
    let dk = 0; for (let i = 0; i < kk.length; i++) dk = Math.max(dk, Math.abs(kk[i] - km[i]))
    console.log('   k (pre-rope) ref vs manual', dk.toExponential(2))
  }
}
{
  const a = (globalThis as Record<string, unknown>).__dbg_attn as Float32Array
  const g = get('attn_0').subarray((S - 1) * c.dim, S * c.dim)
  let d = 0; for (let i = 0; i < c.dim; i++) d = Math.max(d, Math.abs(a[i] - g[i]))
  console.log('attn ref vs graph row 5', d.toExponential(2))
  const qa = quant(a, 32), qg = quant(g, 32)
  for (let i = 0; i < c.dim; i++) if (Math.abs(qa[i] - qg[i]) > 1e-6) console.log('flip at', i, a[i], g[i], qa[i], qg[i])
}
{
  const { roundToInt8Blocks } = await import('../main/engine/model/reference')
  const x = get('attn_in_0').subarray(0, c.dim)
  const t = L.wk, n = c.dim, d = c.nKvHeads * c.headDim
  const plan = planOf(t, { ropeTableLength: 16 })!
  const xq = roundToInt8Blocks(new Float32Array(n), x, n, plan.block)
  const W = tensorToFloat32(t)
  const out = new Float32Array(d)
  for (let i = 0; i < d; i++) { let s = 0; for (let j = 0; j < n; j++) s += W[i * n + j] * xq[j]; out[i] = s }
  for (let b = 0; b < n / plan.block; b++) { let shift = 0; for (let k = b * plan.block; k < (b + 1) * plan.block; k++) shift += xq[k] - x[k]; for (let i = 0; i < d; i++) out[i] += plan.minsT![b * d + i] * shift }
  const km = lin(x, t, n, d)
  let dd = 0; for (let i = 0; i < d; i++) dd = Math.max(dd, Math.abs(out[i] - km[i]))
  const qq = quant(x, 32); let dq = 0; for (let i = 0; i < n; i++) dq = Math.max(dq, Math.abs(qq[i] - xq[i]))
  console.log('replica vs lin', dd, 'quant diff', dq)
}
