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
  const fused = process.env.FUSED === '1'
  for (let l = 0; l < L; l++) {
    let a: string
    if (fused) {
      const qkv = lin(x, dim, 3 * dim)
      a = b.op('Slice', [qkv, b.i64('s', [1], [0]), b.i64('e', [1], [dim]), b.i64('a', [1], [1])])
    } else {
      const q = lin(x, dim, dim), k = lin(x, dim, dim), v = lin(x, dim, dim)
      a = b.op('Add', [b.op('Add', [q, k]), v])
    }
    const o = lin(a, dim, dim)
    let h: string
    if (fused) {
      const gu = lin(o, dim, 2 * hid)
      h = b.op('Slice', [gu, b.i64('s', [1], [0]), b.i64('e', [1], [hid]), b.i64('a', [1], [1])])
    } else {
      const g = lin(o, dim, hid), u = lin(o, dim, hid)
      h = b.op('Add', [g, u])
    }
    x = lin(h, hid, dim)
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
  const cpu: number[] = []
  for (let i = 0; i < (M > 1 ? 6 : 30); i++) { const c0 = process.cpuUsage(); const t0 = performance.now(); await s.run(feeds); ts.push(performance.now() - t0); const c = process.cpuUsage(c0); cpu.push((c.user + c.system) / 1000) }
  ts.sort((a, b) => a - b); cpu.sort((a, b) => a - b)
  const med = ts[ts.length >> 1]
  console.log(`bits ${bits} bs ${bs} zp ${zp} level ${level} M=${M} thr=${threads}: median ${med.toFixed(2)} ms (min ${ts[0].toFixed(2)}) cpu median ${cpu[cpu.length >> 1].toFixed(2)} ms -> ${(M * 1000 / med).toFixed(0)} tok/s`)
  await s.release()
}
