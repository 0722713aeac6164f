import { GraphBuilder, MS_DOMAIN } from '../main/engine/graph/onnx-builder'
import * as ort from 'onnxruntime-node'
import { profileRuns } from './_exp-prof'

const L = 12, nKv = 12, hd = 64, nH = 12
const T = Number(process.argv[2] ?? 1024)
const threads = Number(process.argv[3] ?? 1)

function i64(b: GraphBuilder, v: number[]) { return b.i64('c', [v.length], v) }

// B: split attention over a capacity buffer, decode S=1
function buildSplit(): Uint8Array {
  const b = new GraphBuilder('split')
  b.input('q', 'float32', [nKv, 1, hd])
  b.input('mask', 'float32', ['C'])
  const outs: string[] = []
  for (let l = 0; l < L; l++) {
    const pk = b.input(`pk${l}`, 'float32', [nKv, 'C', hd]), pv = b.input(`pv${l}`, 'float32', [nKv, 'C', hd])
    const s = b.op('FusedMatMul', ['q', pk], { domain: MS_DOMAIN, attrs: { transB: { int: 1 } } })
    const m = b.op('Add', [s, 'mask'])
    const p = b.op('Softmax', [m], { attrs: { axis: { int: -1 } } })
    const o = b.op('MatMul', [p, pv])
    outs.push(o)
  }
  b.node('Concat', outs, { outputs: ['out'], attrs: { axis: { int: 0 } } })
  b.output('out', 'float32', [L * nKv, 1, hd])
  return b.toBytes('x')
}
function buildKT(): Uint8Array {
  const b = new GraphBuilder('kt')
  b.input('q', 'float32', [nKv, 1, hd])
  b.input('mask', 'float32', ['C'])
  const outs: string[] = []
  for (let l = 0; l < L; l++) {
    const pk = b.input(`pk${l}`, 'float32', [nKv, hd, 'C']), pv = b.input(`pv${l}`, 'float32', [nKv, 'C', hd])
    const s = b.op('MatMul', ['q', pk])
    const m = b.op('Add', [s, 'mask'])
    const p = b.op('Softmax', [m], { attrs: { axis: { int: -1 } } })
    outs.push(b.op('MatMul', [p, pv]))
  }
  b.node('Concat', outs, { outputs: ['out'], attrs: { axis: { int: 0 } } })
  b.output('out', 'float32', [L * nKv, 1, hd])
  return b.toBytes('x')
}
// A: current: position-major past [T, nKv, hd] concat new, transposes
function buildCurrent(): Uint8Array {
  const b = new GraphBuilder('cur')
  b.input('q', 'float32', [nKv, 1, hd])
  b.input('nk', 'float32', [1, nKv, hd])
  const outs: string[] = []
  for (let l = 0; l < L; l++) {
    const pk = b.input(`pk${l}`, 'float32', ['P', nKv, hd]), pv = b.input(`pv${l}`, 'float32', ['P', nKv, hd])
    const keys = b.op('Concat', [pk, 'nk'], { attrs: { axis: { int: 0 } } })
    const vals = b.op('Concat', [pv, 'nk'], { attrs: { axis: { int: 0 } } })
    const kt = b.op('Transpose', [keys], { attrs: { perm: { ints: [1, 2, 0] } } })
    const vt = b.op('Transpose', [vals], { attrs: { perm: { ints: [1, 0, 2] } } })
    const s = b.op('MatMul', ['q', kt])
    const p = b.op('Softmax', [s], { attrs: { axis: { int: -1 } } })
    outs.push(b.op('MatMul', [p, vt]))
  }
  b.node('Concat', outs, { outputs: ['out'], attrs: { axis: { int: 0 } } })
  b.output('out', 'float32', [L * nKv, 1, hd])
  return b.toBytes('x')
}
// C: GQA with capacity past (BNSH) and new k/v
function buildGqa(): Uint8Array {
  const b = new GraphBuilder('gqa')
  b.input('q', 'float32', [1, 1, nH * hd])
  b.input('k', 'float32', [1, 1, nKv * hd])
  b.input('seqlens_k', 'int32' as any, [1])
  b.input('total', 'int32' as any, [])
  const outs: string[] = []
  for (let l = 0; l < L; l++) {
    const pk = b.input(`pk${l}`, 'float32', [1, nKv, 'C', hd]), pv = b.input(`pv${l}`, 'float32', [1, nKv, 'C', hd])
    const [o] = b.node('GroupQueryAttention', ['q', 'k', 'k', pk, pv, 'seqlens_k', 'total'], { domain: MS_DOMAIN, outputCount: 3, attrs: { num_heads: { int: nH }, kv_num_heads: { int: nKv } } })
    outs.push(o)
  }
  b.node('Concat', outs, { outputs: ['out'], attrs: { axis: { int: 0 } } })
  b.output('out', 'float32', [L, 1, nH * hd])
  return b.toBytes('x')
}

async function time(name: string, bytes: Uint8Array, feeds: Record<string, ort.Tensor>) {
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential' })
  for (let i = 0; i < 5; i++) await s.run(feeds)
  const ts: number[] = []
  for (let i = 0; i < 40; i++) { const t0 = performance.now(); await s.run(feeds); ts.push(performance.now() - t0) }
  ts.sort((a, b) => a - b)
  console.log(`${name} T=${T} thr=${threads}: median ${ts[20].toFixed(3)} ms, min ${ts[0].toFixed(3)}`)
  await s.release()
}

const rnd = (n: number) => Float32Array.from({ length: n }, () => Math.random() - 0.5)
const C = T
{
  const feeds: Record<string, ort.Tensor> = { q: new ort.Tensor('float32', rnd(nKv * hd), [nKv, 1, hd]) }
  const mask = new Float32Array(C); feeds.mask = new ort.Tensor('float32', mask, [C])
  for (let l = 0; l < L; l++) { feeds[`pk${l}`] = new ort.Tensor('float32', rnd(nKv * C * hd), [nKv, C, hd]); feeds[`pv${l}`] = new ort.Tensor('float32', rnd(nKv * C * hd), [nKv, C, hd]) }
  for (let r = 0; r < 3; r++) { await time('split', buildSplit(), feeds)
  const f2 = { ...feeds }; for (let l = 0; l < L; l++) f2[`pk${l}`] = new ort.Tensor('float32', feeds[`pk${l}`].data as Float32Array, [nKv, hd, C])
  await time('kt', buildKT(), f2) }
  await profileRuns(buildKT(), (() => { const f2 = { ...feeds }; for (let l = 0; l < L; l++) f2[`pk${l}`] = new ort.Tensor('float32', feeds[`pk${l}`].data as Float32Array, [nKv, hd, C]); return f2 })(), threads, 20)
}
{
  const feeds: Record<string, ort.Tensor> = { q: new ort.Tensor('float32', rnd(nKv * hd), [nKv, 1, hd]), nk: new ort.Tensor('float32', rnd(nKv * hd), [1, nKv, hd]) }
  for (let l = 0; l < L; l++) { feeds[`pk${l}`] = new ort.Tensor('float32', rnd(nKv * (T - 1) * hd), [T - 1, nKv, hd]); feeds[`pv${l}`] = new ort.Tensor('float32', rnd(nKv * (T - 1) * hd), [T - 1, nKv, hd]) }
  await time('current', buildCurrent(), feeds)
}
{
  const feeds: Record<string, ort.Tensor> = { q: new ort.Tensor('float32', rnd(nH * hd), [1, 1, nH * hd]), k: new ort.Tensor('float32', rnd(nKv * hd), [1, 1, nKv * hd]),
    seqlens_k: new ort.Tensor('int32', Int32Array.of(T - 1), [1]), total: new ort.Tensor('int32', Int32Array.of(T), []) }
  for (let l = 0; l < L; l++) { feeds[`pk${l}`] = new ort.Tensor('float32', rnd(nKv * C * hd), [1, nKv, C, hd]); feeds[`pv${l}`] = new ort.Tensor('float32', rnd(nKv * C * hd), [1, nKv, C, hd]) }
  await time('gqa', buildGqa(), feeds)
}
