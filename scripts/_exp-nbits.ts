import { GraphBuilder, MS_DOMAIN } from '../main/engine/graph/onnx-builder'
import * as ort from 'onnxruntime-node'
const threads = Number(process.argv[2] ?? 1)
const M = Number(process.argv[3] ?? 1)
const configs = (process.argv[4] ?? '4:0:32:0,4:4:32:0,8:4:32:0').split(',').map((s) => s.split(':').map(Number))
const dim = 768, hid = 2048, L = 12, vocab = 32000
function build(bits: number, level: number, f32: boolean, bs: number, zp: number): Uint8Array {
  const b = new GraphBuilder('g')
  b.input('x', 'float32', ['M', dim])
  let x = 'x'
  const lin = (inp: string, k: number, n: number) => {
    if (f32) return b.op('MatMul', [inp, b.f32('w', [k, n], Float32Array.from({ length: k * n }, () => (Math.random() - 0.5) * 0.05))])
    const nb = k / bs
    const codes = new Uint8Array(n * nb * bs * bits / 8); for (let i = 0; i < codes.length; i++) codes[i] = (Math.random() * 256) | 0
    const scales = Float32Array.from({ length: n * nb }, () => 0.001 + Math.random() * 0.01)
    const ins = [inp, b.initializer('c', 'uint8', [n, nb, bs * bits / 8], codes), b.f32('s', [n * nb], scales)]
    if (zp) ins.push(b.initializer('z', 'uint8', [n * Math.ceil(nb * bits / 8)], new Uint8Array(n * Math.ceil(nb * bits / 8)).fill(bits === 8 ? 32 : 0)))
    return b.op('MatMulNBits', ins, { domain: MS_DOMAIN, attrs: { K: { int: k }, N: { int: n }, bits: { int: bits }, block_size: { int: bs }, accuracy_level: { int: level } } })
  }
  for (let l = 0; l < L; l++) {
    const q = lin(x, dim, dim), k = lin(x, dim, dim), v = lin(x, dim, dim)
    const a = b.op('Add', [b.op('Add', [q, k]), v])
    const o = lin(a, dim, dim)
    const g = lin(o, dim, hid), u = lin(o, dim, hid)
    x = lin(b.op('Add', [g, u]), hid, dim)
  }
  b.node('MatMul' === 'x' ? '' : 'Identity', [lin(x, dim, vocab)], { outputs: ['y'] })
  b.output('y', 'float32', ['M', vocab])
  return b.toBytes('x')
}
for (const [bits, level, bs, zp] of configs) {
  const f32 = bits === 32
  const s = await ort.InferenceSession.create(build(bits, level, f32, bs, zp), { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential' })
  const feeds = { x: new ort.Tensor('float32', Float32Array.from({ length: M * dim }, () => Math.random() - 0.5), [M, dim]) }
  for (let i = 0; i < 3; i++) await s.run(feeds)
  const ts: number[] = []
  for (let i = 0; i < (M > 1 ? 6 : 20); i++) { const t0 = performance.now(); await s.run(feeds); ts.push(performance.now() - t0) }
  ts.sort((a, b) => a - b)
  const med = ts[ts.length >> 1]
  console.log(`bits ${bits} bs ${bs} zp ${zp} level ${level} M=${M} thr=${threads}: median ${med.toFixed(2)} ms (min ${ts[0].toFixed(2)}) -> ${(M * 1000 / med).toFixed(0)} tok/s`)
  await s.release()
}
