import { GraphBuilder } from '../main/engine/graph/onnx-builder'
import * as ort from 'onnxruntime-node'
async function time(name: string, bytes: Uint8Array, feeds: Record<string, ort.Tensor>, fetch?: Record<string, ort.Tensor>) {
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all' })
  for (let i = 0; i < 20; i++) await s.run(feeds)
  const ts: number[] = []
  for (let i = 0; i < 200; i++) { const t0 = performance.now(); fetch ? await s.run(feeds, fetch) : await s.run(feeds); ts.push(performance.now() - t0) }
  ts.sort((a, b) => a - b)
  console.log(`${name.padEnd(36)} median ${(ts[100] * 1000).toFixed(0)} µs, p10 ${(ts[20] * 1000).toFixed(0)} µs`)
  await s.release()
}
function g(nOut: number, size: number): Uint8Array {
  const b = new GraphBuilder('g')
  b.input('x', 'float32', [size])
  for (let i = 0; i < nOut; i++) { b.node('Add', ['x', b.f32('c', [], Float32Array.of(i))], { outputs: [`y${i}`] }); b.output(`y${i}`, 'float32', [size]) }
  return b.toBytes('x')
}
for (let r = 0; r < 2; r++) {
  await time('1 output x 3KB', g(1, 768), { x: new ort.Tensor('float32', new Float32Array(768), [768]) })
  await time('25 outputs x 3KB', g(25, 768), { x: new ort.Tensor('float32', new Float32Array(768), [768]) })
  await time('1 output x 72KB', g(1, 768 * 24), { x: new ort.Tensor('float32', new Float32Array(768 * 24), [768 * 24]) })
  await time('1 output x 128KB (logits)', g(1, 32000), { x: new ort.Tensor('float32', new Float32Array(32000), [32000]) })
  await time('1 output x 128KB prealloc', g(1, 32000), { x: new ort.Tensor('float32', new Float32Array(32000), [32000]) }, { y0: new ort.Tensor('float32', new Float32Array(32000), [32000]) })
  await time('1 output x 1.5MB', g(1, 32000 * 12), { x: new ort.Tensor('float32', new Float32Array(32000 * 12), [32000 * 12]) })
}
