import { GraphBuilder } from '../main/engine/graph/onnx-builder'
import * as ort from 'onnxruntime-node'
for (const threads of [1, 2]) for (const N of [1, 100, 356]) {
  const b = new GraphBuilder('g')
  b.input('x', 'float32', [1, 'S', 768])
  let x = 'x'
  const c = b.f32('c', [768], new Float32Array(768).fill(0.5))
  for (let i = 0; i < N; i++) x = b.op(i % 2 ? 'Add' : 'Mul', [x, c])
  b.node('Identity', [x], { outputs: ['y'] })
  b.output('y', 'float32', [1, 'S', 768])
  const s = await ort.InferenceSession.create(b.toBytes('x'), { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' })
  const feeds = { x: new ort.Tensor('float32', new Float32Array(768), [1, 1, 768]) }
  for (let i = 0; i < 50; i++) await s.run(feeds)
  const ts: number[] = []
  for (let i = 0; i < 200; i++) { const c0 = process.cpuUsage(); const t0 = performance.now(); await s.run(feeds); ts.push(performance.now() - t0) }
  ts.sort((a, b) => a - b)
  console.log(`threads ${threads} nodes ${N}: median ${(ts[100] * 1000).toFixed(0)} µs, p10 ${(ts[20] * 1000).toFixed(0)} µs -> ${((ts[20] * 1000) / Math.max(N, 1)).toFixed(2)} µs/node (p10)`)
  await s.release()
}
