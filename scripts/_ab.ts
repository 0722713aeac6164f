// A/B: decode cost per token (wall and CPU) for graph/session variants on one model, alternating.
import { ensureBenchModel } from '../bench/models'
import { createSession } from '../main/engine/devices'
import { compileModel, type GraphOptions } from '../main/engine/graph'
import { loadModel } from '../main/engine/model'
import { ModelEngine } from '../main/engine/runtime/model-engine'
import { join } from 'node:path'
const id = (process.argv[2] ?? 'q4_0') as 'q4_0'
const ctx = Number(process.argv[3] ?? 1024)
const threads = Number(process.argv[4] ?? 1)
const variants = (process.argv[5] ?? 'all,extended,basic').split(',')
const file = await ensureBenchModel(id, join(import.meta.dirname, '..', 'bench', '.models'), console.log)
const m = await loadModel(file.path)
const model = { config: m.config, weights: m.weights! }
const contextLength = ctx + 64
const graph: GraphOptions = { ropeTableLength: contextLength }
const bytes = compileModel(model, graph)
const engines = new Map<string, ModelEngine>()
for (const v of variants) {
  const level = (['all', 'extended', 'basic', 'disabled'].includes(v) ? v : 'all') as 'all'
  const configEntries: Record<string, string> = v.startsWith('no:') ? { 'optimization.disable_specified_optimizers': v.slice(3) } : v.startsWith('cfg:') ? Object.fromEntries([v.slice(4).split('=')]) : {}
  engines.set(v, new ModelEngine(model, await createSession(bytes, { device: 'cpu', intraOpThreads: threads, interOpThreads: 1, optimizationLevel: level, configEntries }), { contextLength }))
}
const prompt = Array.from({ length: ctx }, (_, i) => 3 + ((i * 7919) % 31000))
for (const e of engines.values()) await e.forward(prompt, 0)
const res = new Map<string, { wall: number[]; cpu: number[] }>()
for (let round = 0; round < 4; round++) {
  for (const [v, e] of engines) {
    let r = res.get(v); if (!r) res.set(v, (r = { wall: [], cpu: [] }))
    for (let s = 0; s < 6; s++) {
      const c0 = process.cpuUsage(); const t0 = performance.now()
      await e.forward([5 + s], ctx + s)
      const c = process.cpuUsage(c0)
      r.wall.push(performance.now() - t0); r.cpu.push((c.user + c.system) / 1000)
    }
    e.truncate(ctx)
  }
}
const med = (x: number[]) => [...x].sort((a, b) => a - b)[x.length >> 1]
for (const [v, r] of res) console.log(`${id} ctx ${ctx} thr ${threads} ${v.padEnd(10)} wall ${med(r.wall).toFixed(2)} ms  cpu ${med(r.cpu).toFixed(2)} ms  (min wall ${Math.min(...r.wall).toFixed(2)})`)
for (const e of engines.values()) await e.dispose()
