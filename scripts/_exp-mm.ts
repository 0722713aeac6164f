import { GraphBuilder, MS_DOMAIN } from '../main/engine/graph/onnx-builder'
import * as ort from 'onnxruntime-node'
const threads = Number(process.argv[2] ?? 1)
const rnd = (n: number) => Float32Array.from({ length: n }, () => Math.random() - 0.5)
async function time(name: string, bytes: Uint8Array, feeds: Record<string, ort.Tensor>, bytesRead: number) {
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential' })
  for (let i = 0; i < 5; i++) await s.run(feeds)
  const ts: number[] = []
  for (let i = 0; i < 40; i++) { const t0 = performance.now(); await s.run(feeds); ts.push(performance.now() - t0) }
  ts.sort((a, b) => a - b)
  console.log(`${name.padEnd(40)} median ${ts[20].toFixed(3)} ms, min ${ts[0].toFixed(3)}  (${(bytesRead / ts[0] / 1e6).toFixed(1)} GB/s at min)`)
  await s.release()
}
const REP = 12
function graph(build: (b: GraphBuilder, i: number) => string, inputs: Array<[string, number[]]>, extra: Array<[string, (string|number)[]]> = []): Uint8Array {
  const b = new GraphBuilder('g')
  for (const [n, d] of inputs) b.input(n, 'float32', d)
  const outs: string[] = []
  for (let i = 0; i < REP; i++) outs.push(b.op('ReduceSum', [build(b, i)], { attrs: { keepdims: { int: 0 } } }))
  b.node('Concat', outs.map((o) => b.op('Reshape', [o, b.i64('s', [1], [1])])), { outputs: ['out'], attrs: { axis: { int: 0 } } })
  b.output('out', 'float32', [REP])
  return b.toBytes('x')
}
const C = 1024, nKv = 12, hd = 64
const kbuf = Array.from({ length: REP }, () => rnd(nKv * C * hd))
const feedsOf = (shapeA: number[], shapeB: number[]) => {
  const f: Record<string, ort.Tensor> = { a: new ort.Tensor('float32', rnd(shapeA.reduce((x, y) => x * y)), shapeA) }
  for (let i = 0; i < REP; i++) f[`b${i}`] = new ort.Tensor('float32', kbuf[i], shapeB)
  return f
}
const ins = (shapeA: number[], shapeB: number[]): Array<[string, number[]]> => [['a', shapeA], ...Array.from({ length: REP }, (_, i): [string, number[]] => [`b${i}`, shapeB])]
const bytes = REP * nKv * C * hd * 4
for (let r = 0; r < 2; r++) {
  await time('batched q[12,1,64] x K^T[12,64,1024]', graph((b, i) => b.op('MatMul', ['a', `b${i}`]), ins([nKv, 1, hd], [nKv, hd, C])), feedsOf([nKv, 1, hd], [nKv, hd, C]), bytes)
  await time('batched p[12,1,1024] x V[12,1024,64]', graph((b, i) => b.op('MatMul', ['a', `b${i}`]), ins([nKv, 1, C], [nKv, C, hd])), feedsOf([nKv, 1, C], [nKv, C, hd]), bytes)
  await time('fused transB q[12,1,64] K[12,1024,64]', graph((b, i) => b.op('FusedMatMul', ['a', `b${i}`], { domain: MS_DOMAIN, attrs: { transB: { int: 1 } } }), ins([nKv, 1, hd], [nKv, C, hd])), feedsOf([nKv, 1, hd], [nKv, C, hd]), bytes)
  await time('2D x[1,768] W[768,1024] (gemv)', graph((b, i) => b.op('MatMul', ['a', `b${i}`]), ins([1, 768], [768, C])), feedsOf([1, 768], [768, C]), bytes)
  await time('Mul+ReduceSum q[12,1,64]*K[12,1024,64]', graph((b, i) => b.op('ReduceSum', [b.op('Mul', ['a', `b${i}`]), b.i64('ax', [1], [2])], { attrs: { keepdims: { int: 0 } } }), ins([nKv, 1, hd], [nKv, C, hd])), feedsOf([nKv, 1, hd], [nKv, C, hd]), bytes)
  await time('ReduceSum only K[12,1024,64]', graph((b, i) => b.op('ReduceSum', [`b${i}`, b.i64('ax', [1], [2])], { attrs: { keepdims: { int: 0 } } }), ins([nKv, 1, hd], [nKv, C, hd])), feedsOf([nKv, 1, hd], [nKv, C, hd]), bytes)
}
