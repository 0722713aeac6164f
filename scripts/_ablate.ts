// CPU-time ablation of decode: which non-matmul parts cost what (1 thread).
import { join } from 'node:path'
import { ensureBenchModel } from '../bench/models'
import { createSession } from '../main/engine/devices'
import { describeValue, KV_OUTPUT, kvOutputValues, VALUE, wholeModelSegment } from '../main/engine/graph'
import { emitGroup } from '../main/engine/graph/op-groups'
import { EmitContext } from '../main/engine/graph/emit-context'
import { GraphBuilder } from '../main/engine/graph/onnx-builder'
import { loadModel } from '../main/engine/model'
import { ModelEngine } from '../main/engine/runtime/model-engine'
const id = (process.argv[2] ?? 'q4_0') as 'q4_0'
const ctx = Number(process.argv[3] ?? 16)
const variants = (process.argv[4] ?? 'full,noattn,norope,noattn+norope').split(',')
const file = await ensureBenchModel(id, join(import.meta.dirname, '..', 'bench', '.models'), console.log)
const m = await loadModel(file.path)
const model = { config: m.config, weights: m.weights! }
const c = model.config
function build(variant: string): Uint8Array {
  const spec = wholeModelSegment(c)
  const b = new GraphBuilder('t')
  const ectx = new EmitContext(b, c, model.weights, { ropeTableLength: 1200 })
  for (const name of spec.inputs) { const { elem, dims } = describeValue(c, name); ectx.set(name, b.input(name, elem, dims)) }
  for (const g of spec.groups) {
    const l = g.layer ?? 0
    if (variant.includes('noattn') && g.kind === 'attention') { ectx.set(VALUE.attn(l), ectx.get(VALUE.qRot(l))); b.op('Identity', [ectx.get(VALUE.pastK(l))]); b.op('Identity', [ectx.get(VALUE.pastV(l))]); continue }
    if (variant.includes('norope') && g.kind === 'rope') { ectx.set(VALUE.qRot(l), ectx.get(VALUE.q(l))); ectx.set(VALUE.newK(l), ectx.get(VALUE.k(l))); continue }
    emitGroup(ectx, g)
  }
  const kv = kvOutputValues(spec)
  b.node('Identity', [ectx.get('logits')], { outputs: ['logits'] }); b.output('logits', 'float32', [1, c.vocabSize])
  b.node('Concat', kv.map((n) => ectx.get(n)), { outputs: [KV_OUTPUT], attrs: { axis: { int: 0 } } })
  b.output(KV_OUTPUT, 'float32', [kv.length, 'seq', c.nKvHeads * c.headDim])
  return b.toBytes('t')
}
const engines = new Map<string, ModelEngine>()
for (const v of variants) engines.set(v, new ModelEngine(model, await createSession(build(v), { device: 'cpu', intraOpThreads: 1, interOpThreads: 1 }), { contextLength: 1200 }))
const prompt = Array.from({ length: ctx }, (_, i) => 3 + ((i * 7919) % 31000))
for (const e of engines.values()) await e.forward(prompt, 0)
const res = new Map<string, number[]>()
for (let r = 0; r < 5; r++) for (const [v, e] of engines) {
  const c0 = process.cpuUsage()
  for (let s = 0; s < 8; s++) await e.forward([5 + s], ctx + s)
  const cc = process.cpuUsage(c0); (res.get(v) ?? res.set(v, []).get(v)!).push((cc.user + cc.system) / 8000)
  e.truncate(ctx)
}
for (const [v, x] of res) console.log(`${id} ctx ${ctx} ${v.padEnd(16)} cpu/token ${[...x].sort((a, b) => a - b)[2].toFixed(2)} ms  (${x.map((y) => y.toFixed(1)).join(',')})`)
