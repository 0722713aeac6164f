/**
 * @file The two gates to ONNX Runtime, same graph, same process, same options: onnxruntime-node's session vs a
 * session made through our C-API binding on the CPU EP device (`createEpDeviceSession`), each driven by the
 * single-session engine (prefill 16 tokens, then greedy decode steps). Reps alternate between the gates, so load
 * from elsewhere hits both alike; the output is ms per decode step and per prefill, median of the reps.
 *
 *   node --import tsx bench/gates.ts [--models f32,q8_0,q4_0,q4_k_m] [--steps 64] [--reps 7] [--threads N]
 *
 * The models are the bench's 110M files (written by `npm run bench` into bench/.models). It answers #12's
 * "decode through the binding vs onnxruntime-node: keep whichever is faster": each gate's plain `run` (outputs
 * returned, then copied into the engine's buffers) and its `runInto` (onnxruntime-node: pre-allocated outputs;
 * the C API: I/O binding, the KV cache and outputs bound once).
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

/** The gates and ways to run: each gate's `run` (outputs returned, then copied into the engine's buffers) and `runInto`. */
const VARIANTS = ['node run', 'node runInto', 'C run', 'C runInto (bound)'] as const
type Variant = (typeof VARIANTS)[number]

/** `session` whose runInto goes through `run` and copies: the path without pre-allocated or bound outputs. */
function viaRun(session: OrtSession): OrtSession {
  return {
    ...session,
    async runInto(feeds, outputs) {
      const out = await session.run(feeds, Object.keys(outputs))
      for (const [name, t] of Object.entries(outputs)) (t.data as Float32Array).set(out[name].data as Float32Array)
    }
  }
}

console.log(`${threads} threads, prompt ${PROMPT.length}, ${steps} decode steps, ${reps} reps in rotating order`)
console.log(`| model | prefill ms: ${VARIANTS.join(' / ')} | decode ms/step: ${VARIANTS.join(' / ')} | bound C ÷ node run (decode) |`)
console.log('|---|---:|---:|---:|')
const isModelId = (s: string): s is BenchModelId => BENCH_MODEL_IDS.some((m) => m === s)
for (const id of values.models.split(',')) {
  if (!isModelId(id)) throw new Error(`unknown model ${id}; models: ${BENCH_MODEL_IDS.join(', ')}`)
  const file = await ensureBenchModel(id, 'bench/.models', () => {})
  const loaded = await loadModel(file.path)
  if (!loaded.weights) throw new Error(`${file.path}: no weights`)
  const model = { config: { ...loaded.config, contextLength: CONTEXT }, weights: loaded.weights }
  const bytes = compileModel(model, { ropeTableLength: CONTEXT })
  const open = async (v: Variant): Promise<OrtSession> => {
    const session = v.startsWith('node') ? await createSession(bytes, { ep: 'cpu', intraOpThreads: threads }) : createEpDeviceSession(OrtCRuntime.open(), bytes, { device: { epName: 'CPUExecutionProvider' }, intraOpThreads: threads })
    return v.endsWith('run') ? viaRun(session) : session
  }
  const engines = new Map<Variant, SingleSessionEngine>()
  const times = new Map<Variant, [number, number][]>()
  for (const v of VARIANTS) {
    const engine = new SingleSessionEngine(model, await open(v), { contextLength: CONTEXT, prefillChunkTokens: 128 })
    engines.set(v, engine)
    times.set(v, [])
    await rep(engine)
  }
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < VARIANTS.length; i++) {
      const v = VARIANTS[(r + i) % VARIANTS.length]
      const engine = engines.get(v)
      if (engine) times.get(v)?.push(await rep(engine))
    }
  }
  const pre = (v: Variant): number => median((times.get(v) ?? []).map((t) => t[0]))
  const dec = (v: Variant): number => median((times.get(v) ?? []).map((t) => t[1]))
  console.log(`| 110M ${id} | ${VARIANTS.map((v) => pre(v).toFixed(1)).join(' / ')} | ${VARIANTS.map((v) => dec(v).toFixed(2)).join(' / ')} | ${(dec('C runInto (bound)') / dec('node run')).toFixed(3)} |`)
  for (const engine of engines.values()) await engine.dispose()
}
