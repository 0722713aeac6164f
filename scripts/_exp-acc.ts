import { GraphBuilder, MS_DOMAIN } from '../main/engine/graph/onnx-builder'
import * as ort from 'onnxruntime-node'
const M = Number(process.argv[2] ?? 3), K = Number(process.argv[3] ?? 512), N = Number(process.argv[4] ?? 96)
for (const [bits, bs, zpMode] of [[4, 32, 1], [4, 32, 2], [8, 16, 2]] as const) {
  const nb = K / bs
  const codes = new Uint8Array(N * nb * bs * bits / 8); for (let i = 0; i < codes.length; i++) codes[i] = (Math.random() * 256) | 0
  const scales = Float32Array.from({ length: N * nb }, () => 0.001 + Math.random() * 0.01)
  const zpPerRow = Math.ceil(nb * bits / 8)
  const zps = zpMode ? Uint8Array.from({ length: N * zpPerRow }, () => zpMode === 2 ? 0 : (Math.random() * 256) | 0) : null
  const b = new GraphBuilder('g')
  b.input('x', 'float32', [1, M, K])
  const ins = ['x', b.initializer('c', 'uint8', [N, nb, bs * bits / 8], codes), b.f32('s', [N * nb], scales)]
  if (zps) ins.push(b.initializer('z', 'uint8', [zps.length], zps))
  b.node('MatMulNBits', ins, { domain: MS_DOMAIN, outputs: ['y'], attrs: { K: { int: K }, N: { int: N }, bits: { int: bits }, block_size: { int: bs }, accuracy_level: { int: 4 } } })
  b.output('y', 'float32', [1, M, N])
  const s = await ort.InferenceSession.create(b.toBytes('x'), { intraOpNumThreads: 1 })
  const x = Float32Array.from({ length: M * K }, () => (Math.random() - 0.5) * 4)
  const y = (await s.run({ x: new ort.Tensor('float32', x, [1, M, K]) })).y.data as Float32Array
  // dequant W
  const W = new Float64Array(N * K)
  for (let n = 0; n < N; n++) for (let blk = 0; blk < nb; blk++) {
    let zp = 1 << (bits - 1)
    if (zps) zp = bits === 8 ? zps[n * zpPerRow + blk] : (zps[n * zpPerRow + (blk >> 1)] >> ((blk & 1) * 4)) & 15
    for (let i = 0; i < bs; i++) {
      const idx = (n * nb + blk) * bs + i
      const code = bits === 8 ? codes[idx] : (codes[idx >> 1] >> ((idx & 1) * 4)) & 15
      W[n * K + blk * bs + i] = Math.fround((code - zp) * scales[n * nb + blk])
    }
  }
  const rne = (v: number) => { const f = Math.floor(v); const d = v - f; return d > 0.5 ? f + 1 : d < 0.5 ? f : (f % 2 === 0 ? f : f + 1) }
  const xq = new Float64Array(M * K)
  for (let m = 0; m < M; m++) for (let blk = 0; blk < K / bs; blk++) {
    let amax = 0; for (let i = 0; i < bs; i++) amax = Math.max(amax, Math.abs(x[m * K + blk * bs + i]))
    const scale = Math.fround(amax / 127), inv = amax ? Math.fround(127 / amax) : 0
    for (let i = 0; i < bs; i++) { const j = m * K + blk * bs + i; xq[j] = rne(Math.fround(x[j] * inv)) * scale }
  }
  let errPlain = 0, errEmu = 0, mag = 0
  for (let m = 0; m < M; m++) for (let n = 0; n < N; n++) {
    let a = 0, q = 0
    for (let k = 0; k < K; k++) { a += W[n * K + k] * x[m * K + k]; q += W[n * K + k] * xq[m * K + k] }
    errPlain = Math.max(errPlain, Math.abs(y[m * N + n] - a)); errEmu = Math.max(errEmu, Math.abs(y[m * N + n] - q)); mag = Math.max(mag, Math.abs(a))
  }
  console.log(`bits ${bits} bs ${bs} zp ${zpMode}: max|y| ${mag.toExponential(2)}  err vs f32 ${errPlain.toExponential(2)}  err vs emulated ${errEmu.toExponential(2)}`)
  await s.release()
}
