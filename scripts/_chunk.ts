import { join } from 'node:path'
import { ensureBenchModel } from '../bench/models'
import { createSession } from '../main/engine/devices'
import { compileModel } from '../main/engine/graph'
import { loadModel } from '../main/engine/model'
import { ModelEngine } from '../main/engine/runtime/model-engine'
const id = (process.argv[2] ?? 'q4_0') as 'q4_0'
const chunks = (process.argv[3] ?? '128,512').split(',').map(Number)
const n = Number(process.argv[4] ?? 512)
const file = await ensureBenchModel(id, join(import.meta.dirname, '..', 'bench', '.models'), console.log)
const m = await loadModel(file.path)
const model = { config: m.config, weights: m.weights! }
const bytes = compileModel(model, { ropeTableLength: 1024, int8Activations: process.argv[5] !== 'f32act' })
const session = await createSession(bytes, { device: 'cpu', intraOpThreads: 1, interOpThreads: 1 })
const engines = chunks.map((c) => new ModelEngine(model, session, { contextLength: 1024, prefillChunk: c }))
const prompt = Array.from({ length: n }, (_, i) => 3 + ((i * 7919) % 31000))
const res = chunks.map(() => [] as number[])
for (let r = 0; r < 3; r++) for (let i = 0; i < engines.length; i++) {
  const c0 = process.cpuUsage(); await engines[i].forward(prompt, 0); const c = process.cpuUsage(c0)
  res[i].push(n * 1e6 / (c.user + c.system))
}
chunks.forEach((c, i) => console.log(`${id} prefill ${n} chunk ${c}: ${[...res[i]].sort((a, b) => a - b)[1].toFixed(1)} tok per cpu-s  (${res[i].map((x) => x.toFixed(0)).join(',')})`))
