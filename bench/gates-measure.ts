/**
 * @file The two gates to ONNX Runtime, same graph, same process, same options: onnxruntime-node's session vs a
 * session made through our C-API binding on the CPU EP device (`createEpDeviceSession`), each driven by the
 * single-session engine (prefill a 16-token prompt, then greedy decode steps): onnxruntime-node's `run`
 * (outputs returned, then copied into the engine's buffers — also what that gate's `runInto` does, since its
 * pre-allocated fetches measured slower), and the C API both ways: `run` the same, and `runInto` through I/O
 * binding (the KV cache and the outputs bound once). Reps rotate the order of the variants, so load from
 * elsewhere hits all alike; each figure is the median of the reps.
 *
 * It answers #12's "decode through the binding vs onnxruntime-node: keep whichever is faster"
 * (device-session.ts `createCpuSession` cites the result).
 */
import { createEpDeviceSession, createSession, OrtCRuntime, type OrtSession } from '../main/engine/devices'
import { compileModel } from '../main/engine/graph'
import { loadModel } from '../main/engine/model'
import { SingleSessionEngine } from '../main/engine/runtime/session/single-session-engine'
import { argmax } from './peer-tandem'
import { ensureBenchModel, MODEL_LABELS, type BenchModelId } from './models'
import { median } from './stats'

/** The gates and ways to run. */
export const GATE_VARIANTS = ['node run', 'C run', 'C runInto (bound)'] as const
export type GateVariant = (typeof GATE_VARIANTS)[number]

/** What to measure. */
export interface GateOptions {
  readonly models: readonly BenchModelId[]
  readonly variants?: readonly GateVariant[]
  readonly steps: number
  readonly reps: number
  readonly threads: number
  readonly modelsDir: string
  readonly log?: (line: string) => void
}

/** One model's medians per variant. */
export interface GateRow {
  readonly model: BenchModelId
  readonly label: string
  readonly prefillMs: Readonly<Partial<Record<GateVariant, number>>>
  readonly decodeMsPerStep: Readonly<Partial<Record<GateVariant, number>>>
}

/** Positions the engines hold: the prompt and every decode step. */
const PROMPT = Array.from({ length: 16 }, (_, i) => 100 + i * 37)

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

/** One rep: prefill the prompt, then `steps` greedy steps; returns [prefill ms, ms per decode step]. */
async function rep(engine: SingleSessionEngine, steps: number): Promise<[number, number]> {
  const t0 = performance.now()
  let logits = await engine.forward(PROMPT, 0)
  const t1 = performance.now()
  for (let s = 0; s < steps; s++) logits = await engine.forward([argmax(logits)], PROMPT.length + s)
  return [t1 - t0, (performance.now() - t1) / steps]
}

/** Measures every variant on every model. */
export async function measureGates(options: GateOptions): Promise<GateRow[]> {
  const variants = options.variants ?? GATE_VARIANTS
  const context = PROMPT.length + options.steps
  const rows: GateRow[] = []
  for (const id of options.models) {
    const file = await ensureBenchModel(id, options.modelsDir, options.log ?? (() => {}))
    const loaded = await loadModel(file.path)
    if (!loaded.weights) throw new Error(`${file.path}: no weights`)
    const model = { config: { ...loaded.config, contextLength: context }, weights: loaded.weights }
    const bytes = compileModel(model, { ropeTableLength: context })
    const open = async (v: GateVariant): Promise<OrtSession> => {
      const session = v.startsWith('node')
        ? await createSession(bytes, { ep: 'cpu', intraOpThreads: options.threads })
        : createEpDeviceSession(OrtCRuntime.open(), bytes, { device: { epName: 'CPUExecutionProvider' }, intraOpThreads: options.threads })
      return v.endsWith('run') ? viaRun(session) : session
    }
    const engines = new Map<GateVariant, SingleSessionEngine>()
    const times = new Map<GateVariant, [number, number][]>()
    try {
      for (const v of variants) {
        const engine = new SingleSessionEngine(model, await open(v), { contextLength: context, prefillChunkTokens: 128 })
        engines.set(v, engine)
        times.set(v, [])
        await rep(engine, options.steps)
      }
      for (let r = 0; r < options.reps; r++) {
        for (let i = 0; i < variants.length; i++) {
          const v = variants[(r + i) % variants.length]
          const engine = engines.get(v)
          if (engine) times.get(v)?.push(await rep(engine, options.steps))
        }
      }
    } finally {
      for (const engine of engines.values()) await engine.dispose()
    }
    const of = (k: 0 | 1): Partial<Record<GateVariant, number>> => Object.fromEntries(variants.map((v) => [v, median((times.get(v) ?? []).map((t) => t[k]))]))
    rows.push({ model: id, label: MODEL_LABELS[id], prefillMs: of(0), decodeMsPerStep: of(1) })
    options.log?.(`gates: ${MODEL_LABELS[id]} done`)
  }
  return rows
}

/** The rows as a markdown table: prefill and decode per variant, and the bound C API's decode over node's `run`. */
export function renderGates(rows: readonly GateRow[], variants: readonly GateVariant[] = GATE_VARIANTS): string {
  const out = [
    `| model | prefill 16 tok, ms: ${variants.join(' / ')} | decode ms/step: ${variants.join(' / ')} | bound C API ÷ node run (decode) |`,
    '|---|---:|---:|---:|'
  ]
  const fmt = (x: number | undefined, digits: number): string => (x === undefined ? '–' : x.toFixed(digits))
  for (const r of rows) {
    const bound = r.decodeMsPerStep['C runInto (bound)']
    const node = r.decodeMsPerStep['node run']
    out.push(
      `| ${r.label} | ${variants.map((v) => fmt(r.prefillMs[v], 1)).join(' / ')} | ${variants.map((v) => fmt(r.decodeMsPerStep[v], 2)).join(' / ')} | ${bound === undefined || node === undefined ? '–' : `${(bound / node).toFixed(2)}×`} |`
    )
  }
  return out.join('\n')
}
