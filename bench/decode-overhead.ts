/**
 * @file Short-context decode overhead, in one process: per-token decode time at context 16 and the graph's
 * nodes per token, for this checkout's graph compiler and engine and, with --base, another checkout's —
 * alternating between the two every repetition so a shared machine's drift hits both alike. Each side's
 * SingleSessionEngine runs on this thread (no worker, no IPC), so what is left is the graph run, the
 * output copies and the engine's JS. With --profile, each side's session also writes an ONNX Runtime
 * per-node profile of a few decode steps (kept in a temp folder, path printed), summarized by op type:
 * executed nodes (after ONNX Runtime's fusions) and µs per token — the profiler's own cost included, so
 * compare the counts, and the times only between op types.
 *
 *   git archive HEAD | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   node --import tsx bench/decode-overhead.ts [--base /tmp/base] [--models stories260k,f32,q8_0,q4_0]
 *     [--threads 2] [--steps 32] [--reps 9] [--profile] [--models-dir bench/.models]
 *     [--config session.intra_op.allow_spinning=0] [--base-config session.intra_op.allow_spinning=1]
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { writeRandomGgufModel } from '../test/fixtures/random-gguf'
import { BENCH_MODEL_IDS, ensureBenchModel, SHAPE_110M } from './models'

type Side = 'old' | 'new'
const PROMPT_TOKENS = 16
/**
 * 'skeleton': the 110M bench models' structure (12 layers, 12 heads, vocab 32,000, Q4_0 matmuls) with
 * dim 96 and hidden 256, so its weights are ~2 MB and its decode time is the per-token overhead of that
 * structure: graph nodes, session run, the logits and K/V outputs, the engine's JS.
 */
const SKELETON_SPEC = { ...SHAPE_110M, dim: 96, hiddenDim: 256, tensorType: 'q4_0', seed: 11 } as const

/** The model file for an id of `--models` (a bench model, or the skeleton written once into `dir`). */
async function modelFile(id: string, dir: string): Promise<{ label: string; path: string }> {
  if (id === 'skeleton') {
    const path = join(dir, 'skeleton-110m-structure-q4_0.gguf')
    if (!existsSync(path)) await writeRandomGgufModel(path, SKELETON_SPEC)
    return { label: '110M-structure skeleton Q4_0', path }
  }
  const modelId = BENCH_MODEL_IDS.find((m) => m === id)
  if (modelId === undefined) throw new Error(`unknown model ${id}; known: skeleton, ${BENCH_MODEL_IDS.join(', ')}`)
  return ensureBenchModel(modelId, dir, (line) => console.error(line))
}

/** Decode steps profiled per side (after the warm-up). */
const PROFILE_STEPS = 8

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    models: { type: 'string', default: 'stories260k,skeleton,f32,q8_0,q4_0' },
    threads: { type: 'string', default: '2' },
    steps: { type: 'string', default: '32' },
    reps: { type: 'string', default: '9' },
    profile: { type: 'boolean', default: false },
    'models-dir': { type: 'string' },
    /** ORT session config entries of the new side, e.g. --config session.intra_op.allow_spinning=0 */
    config: { type: 'string', multiple: true, default: [] },
    /** the old side's entries; given without --base, the old side is this checkout with these entries */
    'base-config': { type: 'string', multiple: true }
  }
})
const threads = Number(values.threads)
const steps = Number(values.steps)
const reps = Number(values.reps)
const roots: Partial<Record<Side, string>> = { new: resolve(import.meta.dirname, '..') }
if (values.base !== undefined) roots.old = resolve(values.base)
else if (values['base-config'] !== undefined) roots.old = roots.new
const entries = (list: readonly string[]): Record<string, string> => Object.fromEntries(list.map((e) => e.split('=', 2)))
const configOf: Record<Side, Record<string, string>> = { new: entries(values.config), old: entries(values['base-config'] ?? values.config) }
const sides = (['old', 'new'] as const).filter((s) => roots[s] !== undefined)

/** What this script uses of a checkout's engine (loaded from that checkout's sources). */
interface EngineModules {
  graph: typeof import('../main/engine/graph')
  devices: typeof import('../main/engine/devices')
  session: typeof import('../main/engine/runtime/session/single-session-engine')
}
const modules = {} as Record<Side, EngineModules>
for (const side of sides) {
  const root = roots[side] ?? ''
  modules[side] = {
    graph: await import(join(root, 'main/engine/graph/index.ts')),
    devices: await import(join(root, 'main/engine/devices/index.ts')),
    session: await import(join(root, 'main/engine/runtime/session/single-session-engine.ts'))
  }
}
const { loadModel } = await import('../main/engine/model')

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

const argmax = (x: Float32Array): number => {
  let best = 0
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i
  return best
}

/** The graph's nodes by op type (before ONNX Runtime's optimizations), from the serialized model. */
async function graphOpCounts(bytes: Uint8Array): Promise<Map<string, number>> {
  const { default: onnxProto } = await import('onnx-proto')
  const model = onnxProto.onnx.ModelProto.decode(bytes)
  const counts = new Map<string, number>()
  for (const n of model.graph?.node ?? []) counts.set(n.opType ?? '?', (counts.get(n.opType ?? '?') ?? 0) + 1)
  return counts
}

/** A profile's node events: executed nodes by op type and their µs, per run. */
async function profileSummary(path: string, runs: number): Promise<{ nodes: number; us: number; byOp: Map<string, { count: number; us: number }> }> {
  const events: unknown = JSON.parse(await readFile(path, 'utf8'))
  if (!Array.isArray(events)) throw new Error(`${path}: not a profile`)
  // skip the first run (the prompt's prefill): only decode steps are summarized
  const runEnds = events.filter((e) => e?.cat === 'Session' && e.name === 'model_run').map((e) => Number(e.ts) + Number(e.dur))
  const firstEnd = Math.min(...runEnds)
  const byOp = new Map<string, { count: number; us: number }>()
  let nodes = 0
  let us = 0
  for (const e of events) {
    if (Number(e?.ts) < firstEnd) continue
    if (e?.cat !== 'Node' || typeof e.name !== 'string' || !e.name.endsWith('_kernel_time')) continue
    const op = String(e.args?.op_name ?? '?')
    const o = byOp.get(op) ?? { count: 0, us: 0 }
    o.count++
    o.us += Number(e.dur)
    byOp.set(op, o)
    nodes++
    us += Number(e.dur)
  }
  for (const o of byOp.values()) {
    o.count /= runs
    o.us /= runs
  }
  return { nodes: nodes / runs, us: us / runs, byOp }
}

const rows = new Map<string, Partial<Record<Side, number[]>>>()
const record = (row: string, side: Side, value: number): void => {
  const r = rows.get(row) ?? {}
  ;(r[side] ??= []).push(value)
  rows.set(row, r)
}

for (const id of values.models.split(',')) {
  const file = await modelFile(id, values['models-dir'] ?? join(roots.new ?? '', 'bench', '.models'))
  const loaded = await loadModel(file.path)
  if (!loaded.weights) throw new Error(`${file.path}: no weights`)
  const model = { config: loaded.config, weights: loaded.weights }
  const contextLength = Math.min(model.config.contextLength, PROMPT_TOKENS + steps + 8)
  const prompt = Array.from({ length: PROMPT_TOKENS }, (_, i) => 1 + ((i * 7919) % (model.config.vocabSize - 1)))

  const engines = {} as Record<Side, { forward(tokens: readonly number[], pos: number): Promise<Float32Array>; dispose(): Promise<void> }>
  for (const side of sides) {
    const m = modules[side]
    const bytes = m.graph.compileModel(model, { ropeTableLength: contextLength })
    const ops = await graphOpCounts(bytes)
    const total = [...ops.values()].reduce((a, b) => a + b, 0)
    const top = [...ops].sort((a, b) => b[1] - a[1]).map(([op, n]) => `${op} ${n}`).join(', ')
    console.log(`${file.label} ${side}: ${total} graph nodes (${m.graph.GRAPH_COMPILER_VERSION}): ${top}`)
    const sessionConfig = { ep: 'cpu', intraOpThreads: threads, interOpThreads: 1, configEntries: configOf[side] }
    if (values.profile) {
      const dir = await mkdtemp(join(tmpdir(), `decode-profile-${side}-${id}-`))
      const session = await m.devices.createSession(bytes, { ...sessionConfig, profileFilePrefix: join(dir, 'profile') })
      const engine = new m.session.SingleSessionEngine(model, session, { contextLength, prefillChunkTokens: 64 })
      let next = argmax(await engine.forward(prompt, 0))
      for (let i = 0; i < PROFILE_STEPS; i++) next = argmax(await engine.forward([next], PROMPT_TOKENS + i))
      session.endProfiling()
      await engine.dispose()
      const [written] = await readdir(dir)
      if (written === undefined) throw new Error(`no profile written in ${dir}`)
      const p = await profileSummary(join(dir, written), PROFILE_STEPS)
      const byOp = [...p.byOp].sort((a, b) => b[1].us - a[1].us).map(([op, o]) => `${op} ${o.count.toFixed(0)}× ${o.us.toFixed(0)} µs`).join(', ')
      console.log(`${file.label} ${side}: ${p.nodes.toFixed(0)} executed nodes per decode step, ${p.us.toFixed(0)} µs of kernels (${join(dir, written)}): ${byOp}`)
    }
    const session = await m.devices.createSession(bytes, sessionConfig)
    engines[side] = new m.session.SingleSessionEngine(model, session, { contextLength, prefillChunkTokens: 64 })
  }

  // warm-up, then alternate
  for (const side of sides) await engines[side].forward(prompt, 0)
  for (let r = 0; r < reps; r++) {
    const order = r % 2 === 0 ? sides : [...sides].reverse()
    for (const side of order) {
      const e = engines[side]
      let next = argmax(await e.forward(prompt, 0))
      const t0 = performance.now()
      for (let i = 0; i < steps; i++) {
        const t = performance.now()
        next = argmax(await e.forward([next], PROMPT_TOKENS + i))
        record(`${file.label} decode step ms (median of steps)`, side, performance.now() - t)
      }
      record(`${file.label} decode ms/token (median of runs)`, side, (performance.now() - t0) / steps)
    }
  }
  for (const side of sides) await engines[side].dispose()
}

console.log(`\n${threads} threads, ${reps} alternating repetitions of ${steps} decode steps after a ${PROMPT_TOKENS}-token prompt; ${sides.map((s) => `${s} = ${roots[s]}`).join(', ')}`)
console.log(`| row | ${sides.map((s) => `${s}: median (p10, range)`).join(' | ')} |${sides.length === 2 ? ' new/old |' : ''}`)
console.log(`|---|${sides.map(() => '---|').join('')}${sides.length === 2 ? '---|' : ''}`)
for (const [row, v] of rows) {
  // the 10th percentile beside the median: on a shared machine preemption only ever adds time
  const p10 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 10)]
  const cell = (xs: number[] = []): string => `${median(xs).toFixed(3)} (p10 ${p10(xs).toFixed(3)}, ${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)})`
  const ratio = v.old && v.new ? ` ${(median(v.new) / median(v.old)).toFixed(2)} |` : ''
  console.log(`| ${row} | ${sides.map((s) => cell(v[s])).join(' | ')} |${ratio}`)
}
