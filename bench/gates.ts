/**
 * @file The two gates to ONNX Runtime, same graph, same process, same options: onnxruntime-node's session vs a
 * session made through our C-API binding on the CPU EP device (`createEpDeviceSession`), each driven by the
 * single-session engine (prefill 16 tokens, then greedy decode steps). Reps alternate between the gates, so load
 * from elsewhere hits both alike; the output is ms per decode step and per prefill, median of the reps.
 *
 *   node --import tsx bench/gates.ts [--models f32,q8_0,q4_0,q4_k_m] [--steps 64] [--reps 7] [--threads N]
 *
 * The models are the bench's 110M files (written by `npm run bench` into bench/.models). It answers #12's
 * "decode through the binding vs onnxruntime-node: keep whichever is faster" for the plain (unbound) path.
 */
import { parseArgs } from 'node:util'
import { createEpDeviceSession, createSession, defaultIntraOpThreads, OrtCRuntime, type OrtSession } from '../main/engine/devices'
import { compileModel } from '../main/engine/graph'
import { loadModel } from '../main/engine/model'
import { SingleSessionEngine } from '../main/engine/runtime/session/single-session-engine'
import { BENCH_MODEL_IDS, ensureBenchModel, type BenchModelId } from './models'

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: 'f32,q8_0,q4_0,q4_k_m' },
    steps: { type: 'string', default: '64' },
    reps: { type: 'string', default: '7' },
    threads: { type: 'string' }
  }
})
const steps = Number(values.steps)
const reps = Number(values.reps)
const threads = values.threads === undefined ? (defaultIntraOpThreads() ?? 0) : Number(values.threads)
const CONTEXT = 128
const PROMPT = Array.from({ length: 16 }, (_, i) => 100 + i * 37)

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

function argmax(x: Float32Array): number {
  let best = 0
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i
  return best
}

/** One rep: prefill the prompt, then `steps` greedy steps; returns [prefill ms, ms per decode step]. */
async function rep(engine: SingleSessionEngine): Promise<[number, number]> {
  const t0 = performance.now()
  let logits = await engine.forward(PROMPT, 0)
  const t1 = performance.now()
  for (let s = 0; s < steps; s++) logits = await engine.forward([argmax(logits)], PROMPT.length + s)
  return [t1 - t0, (performance.now() - t1) / steps]
}

console.log(`${threads} threads, prompt ${PROMPT.length}, ${steps} decode steps, ${reps} alternating reps`)
console.log('| model | prefill ms node / C API | decode ms/step node / C API | C API ÷ node (decode) |')
console.log('|---|---:|---:|---:|')
const isModelId = (s: string): s is BenchModelId => BENCH_MODEL_IDS.some((m) => m === s)
for (const id of values.models.split(',')) {
  if (!isModelId(id)) throw new Error(`unknown model ${id}; models: ${BENCH_MODEL_IDS.join(', ')}`)
  const file = await ensureBenchModel(id, 'bench/.models', () => {})
  const loaded = await loadModel(file.path)
  if (!loaded.weights) throw new Error(`${file.path}: no weights`)
  const model = { config: { ...loaded.config, contextLength: CONTEXT }, weights: loaded.weights }
  const bytes = compileModel(model, { ropeTableLength: CONTEXT })
  const open = async (gate: 'node' | 'c'): Promise<OrtSession> =>
    gate === 'node' ? createSession(bytes, { ep: 'cpu', intraOpThreads: threads }) : createEpDeviceSession(OrtCRuntime.open(), bytes, { device: { epName: 'CPUExecutionProvider' }, intraOpThreads: threads })
  const engines = {
    node: new SingleSessionEngine(model, await open('node'), { contextLength: CONTEXT, prefillChunkTokens: 128 }),
    c: new SingleSessionEngine(model, await open('c'), { contextLength: CONTEXT, prefillChunkTokens: 128 })
  }
  const times = { node: [] as [number, number][], c: [] as [number, number][] }
  await rep(engines.node)
  await rep(engines.c)
  for (let r = 0; r < reps; r++) {
    const order: ('node' | 'c')[] = r % 2 === 0 ? ['node', 'c'] : ['c', 'node']
    for (const g of order) times[g].push(await rep(engines[g]))
  }
  const pre = (g: 'node' | 'c'): number => median(times[g].map((t) => t[0]))
  const dec = (g: 'node' | 'c'): number => median(times[g].map((t) => t[1]))
  console.log(`| 110M ${id} | ${pre('node').toFixed(1)} / ${pre('c').toFixed(1)} | ${dec('node').toFixed(2)} / ${dec('c').toFixed(2)} | ${(dec('c') / dec('node')).toFixed(2)} |`)
  await engines.node.dispose()
  await engines.c.dispose()
}
