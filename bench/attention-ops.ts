/**
 * @file Our attention (emit-attention.ts: ~15 nodes per layer over the runtime-owned cache, read in place)
 * against ONNX Runtime's fused com.microsoft.GroupQueryAttention (one node per layer), decoding one token
 * at a few cache lengths: L layers of attention only, the 110M bench shape by default (12 heads of 64,
 * no GQA). GroupQueryAttention takes the cache as past_key/past_value [1, nKv, C, hd] and returns
 * present_key/value; unless present and past are the same buffer (a pre-allocated output, which
 * onnxruntime-node makes expensive), it copies the whole valid cache into present on every run.
 *
 *   node --import tsx bench/attention-ops.ts [--threads 2] [--layers 12] [--past 16,256,1024] [--reps 15]
 */
import { parseArgs } from 'node:util'
import { createSession, float32Tensor, int64Tensor, type OrtSession, type OrtTensor } from '../main/engine/devices'
import { GraphBuilder, MS_DOMAIN } from '../main/engine/graph'
import { emitAttention } from '../main/engine/graph/emit-attention'
import { EmitContext } from '../main/engine/graph/emit-context'
import { loadModel } from '../main/engine/model'
import { sharedModel } from '../test/helpers/paths'

const { values } = parseArgs({
  options: {
    threads: { type: 'string', default: '2' },
    layers: { type: 'string', default: '12' },
    past: { type: 'string', default: '16,256,1024' },
    reps: { type: 'string', default: '15' }
  }
})
const threads = Number(values.threads)
const layers = Number(values.layers)
const reps = Number(values.reps)
const RUNS_PER_REP = 10
/** ONNX TensorProto.DataType INT32: GroupQueryAttention's seqlens_k and total_sequence_length */
const ONNX_INT32 = 6

// any model serves as the weights EmitContext holds (attention reads none); the shape is the 110M bench model's
const base = await loadModel(sharedModel('stories260K/stories260K.gguf'))
if (!base.weights) throw new Error('no weights')
const config = { ...base.config, dim: 768, nHeads: 12, nKvHeads: 12, headDim: 64, ropeDim: 64 }
const { nHeads, nKvHeads: nKv, headDim: hd } = config
const width = nHeads * hd

/** L layers of our attention: x [1, S, width] is q, k and v of every layer, each layer's output the next one's x. */
function oursGraph(): Uint8Array {
  const b = new GraphBuilder('attention-ours')
  if (!base.weights) throw new Error('no weights')
  const ctx = new EmitContext(b, config, base.weights, { ropeTableLength: 4096 })
  ctx.set('positions', b.input('positions', 'int64', ['seq']))
  let x = b.input('x', 'float32', [1, 'seq', width])
  for (let l = 0; l < layers; l++) {
    const pastKeys = b.input(`past_k_${l}`, 'float32', [nKv, hd, 'capacity'])
    const pastValues = b.input(`past_v_${l}`, 'float32', [nKv, 'capacity', hd])
    x = emitAttention(ctx, { q: x, k: x, v: x, pastKeys, pastValues }, `layer${l}`)
  }
  b.node('Identity', [x], { outputs: ['y'] })
  b.output('y', 'float32', [1, 'seq', width])
  return b.toBytes('bench')
}

/** The same with GroupQueryAttention; seqlens_k = P + S − 1 and total_sequence_length = P + S from positions. */
function gqaGraph(): Uint8Array {
  const b = new GraphBuilder('attention-gqa')
  const positions = b.input('positions', 'int64', ['seq'])
  const last = b.op('Slice', [positions, b.i64('minus_one', [1], [-1]), b.i64('big', [1], [Number.MAX_SAFE_INTEGER])])
  const seqlens = b.op('Cast', [last], { attrs: { to: { int: ONNX_INT32 } } })
  const total = b.op('Cast', [b.op('Squeeze', [b.op('Add', [last, b.i64('one', [1], [1])])])], { attrs: { to: { int: ONNX_INT32 } } })
  let x = b.input('x', 'float32', [1, 'seq', width])
  for (let l = 0; l < layers; l++) {
    const pastKeys = b.input(`past_k_${l}`, 'float32', [1, nKv, 'capacity', hd])
    const pastValues = b.input(`past_v_${l}`, 'float32', [1, nKv, 'capacity', hd])
    x = b.node('GroupQueryAttention', [x, x, x, pastKeys, pastValues, seqlens, total], {
      name: `layer${l}/gqa`,
      domain: MS_DOMAIN,
      outputCount: 3,
      attrs: { num_heads: { int: nHeads }, kv_num_heads: { int: nKv }, scale: { float: 1 } }
    })[0]
  }
  b.node('Identity', [x], { outputs: ['y'] })
  b.output('y', 'float32', [1, 'seq', width])
  return b.toBytes('bench')
}

/** Feeds for one decode step at past length P with a cache of capacity C (keys transposed for ours). */
function feeds(p: number, capacity: number, keysTransposed: boolean): Record<string, OrtTensor> {
  const f: Record<string, OrtTensor> = {
    x: float32Tensor(new Float32Array(width).fill(0.1), [1, 1, width]),
    positions: int64Tensor(BigInt64Array.of(BigInt(p)), [1])
  }
  for (let l = 0; l < layers; l++) {
    const cache = (): Float32Array => Float32Array.from({ length: nKv * hd * capacity }, (_, i) => ((i * 7919) % 101) / 1000)
    f[`past_k_${l}`] = float32Tensor(cache(), keysTransposed ? [nKv, hd, capacity] : [1, nKv, capacity, hd])
    f[`past_v_${l}`] = float32Tensor(cache(), keysTransposed ? [nKv, capacity, hd] : [1, nKv, capacity, hd])
  }
  return f
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const sessions: Record<'ours' | 'gqa', OrtSession> = {
  ours: await createSession(oursGraph(), { ep: 'cpu', intraOpThreads: threads }),
  gqa: await createSession(gqaGraph(), { ep: 'cpu', intraOpThreads: threads })
}
console.log(`${layers} layers of attention, ${nHeads} heads × ${hd}, ${threads} threads; ms per decode step, median of ${reps} alternating reps of ${RUNS_PER_REP} runs`)
console.log('| past P | ours | GroupQueryAttention | gqa/ours |\n|---|---|---|---|')
for (const p of values.past.split(',').map(Number)) {
  const capacity = Math.ceil((p + 1) / 32) * 32
  const f = { ours: feeds(p, capacity, true), gqa: feeds(p, capacity, false) }
  const times: Record<'ours' | 'gqa', number[]> = { ours: [], gqa: [] }
  for (const k of ['ours', 'gqa'] as const) await sessions[k].run(f[k])
  for (let r = 0; r < reps; r++) {
    for (const k of r % 2 === 0 ? (['ours', 'gqa'] as const) : (['gqa', 'ours'] as const)) {
      const t0 = performance.now()
      for (let i = 0; i < RUNS_PER_REP; i++) await sessions[k].run(f[k])
      times[k].push((performance.now() - t0) / RUNS_PER_REP)
    }
  }
  console.log(`| ${p} | ${median(times.ours).toFixed(3)} | ${median(times.gqa).toFixed(3)} | ${(median(times.gqa) / median(times.ours)).toFixed(2)} |`)
}
for (const s of Object.values(sessions)) await s.release()
