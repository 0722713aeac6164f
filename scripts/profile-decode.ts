/**
 * @file In-process speed profile of the engine (no worker): prefill and decode tokens/s of the benchmark's
 * random ~110M Llama GGUFs (F32, Q8_0, Q4_0; written once by bench/models.ts into bench/.models/), per
 * intra-op thread count, plus an optional ONNX Runtime per-op-type breakdown of decode steps.
 *
 *   node --import tsx scripts/profile-decode.ts [--models f32,q8_0,q4_0] [--threads 1,2] [--prefill 128,512]
 *        [--contexts 16,1024] [--steps 16] [--rounds 3] [--profile] [--chunk N (default: the planner's)]
 *
 * Variants are measured alternately (round-robin over rounds) and medians reported, because the machine
 * is shared and runs vary by ±30%. Prefill: tokens/s of one forward of N tokens from an empty cache.
 * Decode: median ms per single-token forward after a prompt of `context` tokens.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ensureBenchModel, type BenchModelId } from '../bench/models'
import type { OrtSession } from '../main/engine/devices'
import type { CompilableModel, GraphOptions } from '../main/engine/graph'
import { loadModel } from '../main/engine/model'
import { defaultPrefillChunkTokens } from '../main/engine/plan'
import { openCachedGraph } from '../main/engine/runtime/session/open-cached-graph'
import { SingleSessionEngine } from '../main/engine/runtime/session/single-session-engine'
import { repoRoot } from '../test/helpers/paths'

const MODELS_DIR = join(repoRoot, 'bench', '.models')
const GRAPH_DIR = join(repoRoot, '.cache', 'profile-graphs')
const PROFILE_DIR = join(repoRoot, '.cache', 'profile-traces')
/** Largest context a run needs: the longest decode context plus the decode steps, with margin. */
const CONTEXT_MARGIN = 64

const { values: args } = parseArgs({
  options: {
    models: { type: 'string', default: 'f32,q8_0,q4_0' },
    threads: { type: 'string', default: '1,2' },
    prefill: { type: 'string', default: '128,512' },
    contexts: { type: 'string', default: '16,1024' },
    steps: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    chunk: { type: 'string' },
    profile: { type: 'boolean', default: false },
    /** ORT session config entries key=value, repeatable (e.g. session.disable_prepacking=1) */
    config: { type: 'string', multiple: true, default: [] },
    /** graph option: --float-activations compiles quantized matmuls with float32 inputs (accuracy_level 0) */
    'float-activations': { type: 'boolean', default: false }
  }
})

const configEntries: Record<string, string> = Object.fromEntries(
  args.config.map((kv) => {
    const at = kv.indexOf('=')
    if (at < 1) throw new Error(`--config wants key=value, got ${kv}`)
    return [kv.slice(0, at), kv.slice(at + 1)]
  })
)

const list = (s: string): number[] => s.split(',').filter(Boolean).map(Number)
const MODEL_IDS = ['f32', 'q8_0', 'q4_0', '500m'] as const
function modelId(s: string): BenchModelId {
  const id = MODEL_IDS.find((m) => m === s)
  if (!id) throw new Error(`unknown model ${s}; one of ${MODEL_IDS.join(', ')}`)
  return id
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** Opens a session as the model worker does (openCachedGraph: cached graph, production session settings). */
async function openSession(model: CompilableModel, graph: GraphOptions, threads: number, profilePrefix?: string): Promise<OrtSession> {
  const { session, info } = await openCachedGraph(model, { cacheDir: GRAPH_DIR, threads, graph, configEntries, profileFilePrefix: profilePrefix })
  if (!info.cacheHit) console.log(`  compiled graph in ${(info.compileMs / 1000).toFixed(1)} s`)
  return session
}

/** Deterministic prompt of `n` ordinary token ids. */
function prompt(n: number, vocab: number): number[] {
  return Array.from({ length: n }, (_, i) => 3 + ((i * 7919) % (vocab - 3)))
}

/** One profile event as ORT writes it (Chrome trace format); fields checked before use. */
interface TraceEvent {
  cat: string
  name: string
  ts: number
  dur: number
  op: string
}

function traceEvents(file: string): TraceEvent[] {
  const raw: unknown = JSON.parse(readFileSync(file, 'utf8'))
  if (!Array.isArray(raw)) throw new Error(`${file}: not a profile`)
  const out: TraceEvent[] = []
  for (const e of raw) {
    if (typeof e !== 'object' || e === null) continue
    const cat = 'cat' in e && typeof e.cat === 'string' ? e.cat : ''
    const name = 'name' in e && typeof e.name === 'string' ? e.name : ''
    const ts = 'ts' in e && typeof e.ts === 'number' ? e.ts : 0
    const dur = 'dur' in e && typeof e.dur === 'number' ? e.dur : 0
    const op = 'args' in e && typeof e.args === 'object' && e.args !== null && 'op_name' in e.args ? String(e.args.op_name) : ''
    out.push({ cat, name, ts, dur, op })
  }
  return out
}

/**
 * Per-op-type kernel time over the last `lastRuns` model runs of an ORT profile: the median over runs
 * of each op type's per-run total (medians, because a preempted kernel on this shared machine would
 * dominate a mean), and likewise the median model_run time and node count.
 */
function opBreakdown(file: string, lastRuns: number): { runMs: number; runs: number; ops: Array<[string, number]>; nodesPerRun: number } {
  const events = traceEvents(file)
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').sort((a, b) => a.ts - b.ts).slice(-lastRuns)
  const perRun = runs.map(() => new Map<string, number>())
  const nodes = runs.map(() => 0)
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue
    const i = runs.findIndex((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur)
    if (i < 0) continue
    perRun[i].set(e.op, (perRun[i].get(e.op) ?? 0) + e.dur)
    nodes[i]++
  }
  const opNames = new Set(perRun.flatMap((m) => [...m.keys()]))
  const ops = [...opNames].map((op): [string, number] => [op, median(perRun.map((m) => m.get(op) ?? 0)) / 1000]).sort((a, b) => b[1] - a[1])
  return { runMs: median(runs.map((r) => r.dur)) / 1000, runs: runs.length, ops, nodesPerRun: median(nodes) }
}

interface Row {
  model: string
  threads: number
  what: string
  samples: number[]
}

async function main(): Promise<void> {
  const threadsList = list(args.threads)
  const prefills = list(args.prefill)
  const contexts = list(args.contexts)
  const steps = Number(args.steps)
  const rounds = Number(args.rounds)
  mkdirSync(GRAPH_DIR, { recursive: true })
  const rows: Row[] = []
  for (const idText of args.models.split(',')) {
    const file = await ensureBenchModel(modelId(idText), MODELS_DIR, (line) => console.log(line))
    const loaded = await loadModel(file.path)
    if (!loaded.weights) throw new Error('no weights')
    const maxNeeded = Math.max(...prefills, ...contexts) + steps + CONTEXT_MARGIN
    const contextLength = Math.min(loaded.config.contextLength, maxNeeded)
    const model: CompilableModel = { config: loaded.config, weights: loaded.weights }
    const chunk = args.chunk === undefined ? defaultPrefillChunkTokens(model.config) : Number(args.chunk)
    const graph: GraphOptions = { ropeTableLength: contextLength, int8Activations: !args['float-activations'] }
    console.log(`${file.label}: ${loaded.quantization}`)
    const engines = new Map<number, SingleSessionEngine>()
    for (const t of threadsList) engines.set(t, new SingleSessionEngine(model, await openSession(model, graph, t), { contextLength, prefillChunkTokens: chunk }))
    const row = (threads: number, what: string): Row => {
      let r = rows.find((x) => x.model === file.label && x.threads === threads && x.what === what)
      if (!r) rows.push((r = { model: file.label, threads, what, samples: [] }))
      return r
    }
    try {
      for (let round = 0; round < rounds; round++) {
        for (const [t, engine] of engines) {
          for (const n of prefills) {
            const t0 = performance.now()
            await engine.forward(prompt(n, loaded.config.vocabSize), 0)
            row(t, `prefill ${n} (tok/s)`).samples.push((n * 1000) / (performance.now() - t0))
          }
          for (const ctx of contexts) {
            let logits = await engine.forward(prompt(ctx, loaded.config.vocabSize), 0)
            const perToken: number[] = []
            for (let s = 0; s < steps; s++) {
              const next = logits.indexOf(Math.max(...logits))
              const t0 = performance.now()
              logits = await engine.forward([next], ctx + s)
              perToken.push(performance.now() - t0)
            }
            row(t, `decode @${ctx} (tok/s)`).samples.push(1000 / median(perToken))
          }
        }
      }
    } finally {
      for (const e of engines.values()) await e.dispose()
    }
    if (args.profile) await profileRuns(model, graph, contextLength, threadsList, prefills, contexts, steps, chunk)
  }
  console.log('\nmodel            threads  measure                 median   (samples)')
  for (const r of rows) {
    console.log(`${r.model.padEnd(16)} ${String(r.threads).padStart(7)}  ${r.what.padEnd(22)} ${median(r.samples).toFixed(1).padStart(7)}   (${r.samples.map((x) => x.toFixed(1)).join(', ')})`)
  }
}

/** Prefill and decode runs under ORT's profiler: where the time goes, per op type. */
async function profileRuns(
  model: CompilableModel,
  graph: GraphOptions,
  contextLength: number,
  threadsList: number[],
  prefills: number[],
  contexts: number[],
  steps: number,
  chunk: number
): Promise<void> {
  mkdirSync(PROFILE_DIR, { recursive: true })
  // [label, prompt length, decode steps]: a prefill is profiled as its last chunk run, a decode as its steps
  const cases: Array<[string, number, number]> = [
    ...prefills.map((n): [string, number, number] => [`prefill ${n}`, n, 0]),
    ...contexts.map((n): [string, number, number] => [`decode @${n}`, n, steps])
  ]
  for (const t of threadsList) {
    for (const [label, promptLength, decodeSteps] of cases) {
      const prefix = join(PROFILE_DIR, `run-${process.pid}-${t}-${label.replace(/\W+/g, '_')}`)
      const session = await openSession(model, graph, t, prefix)
      const engine = new SingleSessionEngine(model, session, { contextLength, prefillChunkTokens: chunk })
      const wallMs: number[] = []
      try {
        const t0 = performance.now()
        await engine.forward(prompt(promptLength, model.config.vocabSize), 0)
        if (decodeSteps === 0) wallMs.push(performance.now() - t0)
        for (let s = 0; s < decodeSteps; s++) {
          const t1 = performance.now()
          await engine.forward([5], promptLength + s)
          wallMs.push(performance.now() - t1)
        }
        session.endProfiling()
      } finally {
        await engine.dispose()
      }
      const base = prefix.slice(PROFILE_DIR.length + 1)
      for (const f of readdirSync(PROFILE_DIR).filter((name) => name.startsWith(base))) {
        const { runMs, runs, ops, nodesPerRun } = opBreakdown(join(PROFILE_DIR, f), decodeSteps === 0 ? 1 : decodeSteps)
        const kernelMs = ops.reduce((a, [, ms]) => a + ms, 0)
        console.log(
          `\n  profile threads=${t} ${label}: ${runs} run(s), ${nodesPerRun} nodes/run; wall ${median(wallMs).toFixed(2)} ms` +
            (decodeSteps === 0 ? ` for the whole prompt; last run: ` : ` median per token = `) +
            `model_run ${runMs.toFixed(2)} ms (kernels ${kernelMs.toFixed(2)} + executor ${(runMs - kernelMs).toFixed(2)})` +
            (decodeSteps === 0 ? '' : ` + outside ORT ${(median(wallMs) - runMs).toFixed(2)}`)
        )
        for (const [op, ms] of ops.slice(0, 14)) console.log(`    ${op.padEnd(34)} ${ms.toFixed(3)} ms/run`)
        rmSync(join(PROFILE_DIR, f))
      }
    }
  }
}

await main()
