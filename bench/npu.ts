/**
 * @file The NPU-path section of `npm run bench -- --virtual-npu` (or `--only virtual-npu`):
 *  - the two gates to ONNX Runtime on the 110M models (bench/gates-measure.ts): decode and prefill through our
 *    C-API binding, bound and not, vs onnxruntime-node;
 *  - the virtual NPU (test provider: it computes on this machine's CPU; its throughput model can only add time,
 *    so every figure here is SIMULATED and measures the path — static chunk graphs, the compiled-model cache,
 *    the scheduler — not an NPU's speed): opening the "prefill on NPU" placement with the EP-context cache cold
 *    and warm, the memory of one chunk-sharing graph vs one graph per chunk position for a 1,024-token prompt
 *    (llm.npu §3.2), and prefill with and without the placement.
 * Each virtual-NPU measurement runs in a child process of its own (bench/npu-child.ts), so its RSS and the
 * NPU's counters are its own.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { defaultIntraOpThreads, EP_CONTEXT_DIR } from '../main/engine/devices'
import { STATIC_CHUNK_TOKENS } from '../main/engine/plan'
import { GATE_VARIANTS, measureGates, renderGates, type GateRow } from './gates-measure'
import { ensureBenchModel, MODEL_LABELS, type BenchModelId } from './models'
import { npuChild, VIRTUAL_NPU_BENCH_OPTIONS } from './npu-common'
import { benchmarkNpuSchedule, renderNpuSchedule, type NpuScheduleRecord } from './npu-schedule'
import { median } from './stats'


/** The model of the virtual-NPU rows: float32 matmuls, which the virtual NPU's default op list takes. */
const NPU_MODEL: BenchModelId = 'f32'
/** The gates rows' models. */
const GATE_MODELS: readonly BenchModelId[] = ['f32', 'q8_0', 'q4_0', 'q4_k_m']
/** The prompt of the chunk-sharing comparison (llm.npu's figure is for 1,024 tokens). */
const SHARING_PROMPT_TOKENS = 1024
const PREFILL_PROMPT_TOKENS = 512

/** Everything the section measured. */
export interface NpuRecord {
  readonly threads: number
  readonly gates: { readonly steps: number; readonly reps: number; readonly rows: readonly GateRow[] }
  readonly virtualNpu: {
    readonly model: string
    readonly chunk: number
    readonly options: Readonly<Record<string, string>>
    /** first open: graphs compiled, EP-context written; then the EP-context cold (graphs cached); then all warm */
    readonly open: { readonly cold: OpenResult; readonly epContextCold: OpenResult; readonly warm: OpenResult }
    readonly memory: { readonly promptTokens: number; readonly positions: number; readonly shared: MemoryResult; readonly perPosition: MemoryResult }
    readonly prefill: PrefillResult
    readonly schedule: NpuScheduleRecord
  }
}

interface OpenResult {
  readonly openMs: number
  readonly npu: Record<string, number>
}

interface MemoryResult {
  readonly graphs: number
  readonly sessions: number
  readonly openMs: number
  readonly graphMiB: number
}

interface PrefillResult {
  readonly promptTokens: number
  readonly cpu: { readonly ms: readonly number[] }
  readonly npuPlacement: { readonly ms: readonly number[]; readonly npu: Record<string, number> }
}


/** Runs the section. */
export async function benchmarkNpuPath(options: { readonly modelsDir: string; readonly reps: number; readonly log: (line: string) => void }): Promise<NpuRecord> {
  const { log } = options
  const threads = defaultIntraOpThreads() ?? 0
  const steps = 100
  const gateReps = Math.max(5, options.reps * 3)
  log(`npu: gates on ${GATE_MODELS.join(', ')} (${gateReps} reps)`)
  const rows = await measureGates({ models: GATE_MODELS, steps, reps: gateReps, threads, modelsDir: options.modelsDir, log })

  const file = await ensureBenchModel(NPU_MODEL, options.modelsDir, log)
  const cacheDir = await mkdtemp(join(tmpdir(), 'tandem-bench-npu-'))
  const chunk = STATIC_CHUNK_TOKENS.default
  const base = { model: file.path, chunk, cacheDir, npuOptions: { ...VIRTUAL_NPU_BENCH_OPTIONS } }
  try {
    log('npu: opening the NPU placement cold (graphs and EP-context compiled)')
    const cold = await npuChild<OpenResult>({ mode: 'open', ...base })
    await rm(join(cacheDir, EP_CONTEXT_DIR), { recursive: true, force: true })
    log('npu: opening again with the graphs cached and the EP-context cache cold')
    const epContextCold = await npuChild<OpenResult>({ mode: 'open', ...base })
    log('npu: opening again with both warm')
    const warm = await npuChild<OpenResult>({ mode: 'open', ...base })
    const positions = SHARING_PROMPT_TOKENS / chunk
    log(`npu: memory of one chunk-sharing graph vs ${positions} per chunk position`)
    const shared = await npuChild<MemoryResult>({ mode: 'memory', ...base, copies: 1 })
    const perPosition = await npuChild<MemoryResult>({ mode: 'memory', ...base, copies: positions })
    log(`npu: prefill of ${PREFILL_PROMPT_TOKENS} tokens, CPU vs the NPU placement`)
    const prefill = await npuChild<Omit<PrefillResult, 'promptTokens'>>({ mode: 'prefill', ...base, promptTokens: PREFILL_PROMPT_TOKENS, reps: Math.max(3, options.reps) })
    const schedule = await benchmarkNpuSchedule(options)
    return {
      threads,
      gates: { steps, reps: gateReps, rows },
      virtualNpu: {
        model: MODEL_LABELS[NPU_MODEL],
        chunk,
        options: VIRTUAL_NPU_BENCH_OPTIONS,
        open: { cold, epContextCold, warm },
        memory: { promptTokens: SHARING_PROMPT_TOKENS, positions, shared, perPosition },
        prefill: { promptTokens: PREFILL_PROMPT_TOKENS, ...prefill },
        schedule
      }
    }
  } finally {
    await rm(cacheDir, { recursive: true, force: true })
  }
}

const s = (ms: number): string => (ms / 1000).toFixed(1)

/** The section as markdown. */
export function renderNpuPath(r: NpuRecord): string {
  const v = r.virtualNpu
  const opts = Object.entries(v.options).map(([k, x]) => `${k}=${x}`).join(', ')
  const { shared, perPosition } = v.memory
  const saving = 1 - shared.graphMiB / perPosition.graphMiB
  const cpuMs = median(v.prefill.cpu.ms)
  const npuMs = median(v.prefill.npuPlacement.ms)
  const np = v.prefill.npuPlacement.npu
  return [
    '## NPU path',
    '',
    `### The two gates to ONNX Runtime (${r.threads} threads, 16-token prompt, ${r.gates.steps} decode steps, median of ${r.gates.reps} reps in rotating order)`,
    '',
    renderGates(r.gates.rows, GATE_VARIANTS),
    '',
    'node = onnxruntime-node; C = our binding to the same library through its C API. `run`: outputs returned and copied into the engine (what onnxruntime-node\'s `runInto` does too); `runInto (bound)`: the C API with I/O binding (KV cache and outputs bound once, nothing handed over per token). The engine\'s CPU session uses the bound C API.',
    '',
    `### Virtual NPU — SIMULATED (test provider, runs on this machine's CPU; ${v.model}; static chunk ${v.chunk}; throughput model ${opts})`,
    '',
    'The virtual NPU computes on the CPU; its throughput model only adds waiting time, so these rows measure the NPU path (static chunk graphs, the compiled-model cache, chunk sharing, the scheduler), not an NPU\'s speed.',
    '',
    '| open the "prefill on NPU" placement | s | graphs compiled by the NPU | modelled compile s | EP-context blobs written / loaded |',
    '|---|---:|---:|---:|---:|',
    ...(
      [
        ['everything cold', v.open.cold],
        ['graphs cached, EP-context cold', v.open.epContextCold],
        ['graphs cached, EP-context warm', v.open.warm]
      ] as const
    ).map(([label, o]) => `| ${label} | ${s(o.openMs)} | ${o.npu.graphsCompiled} | ${s(o.npu.modelledCompileMs)} | ${o.npu.contextBlobsWritten} / ${o.npu.contextBlobsLoaded} |`),
    '',
    `| NPU prefill graphs for a ${v.memory.promptTokens}-token prompt | sessions | open s | RSS added, MiB |`,
    '|---|---:|---:|---:|',
    `| one chunk-sharing graph per segment (Tandem) | ${shared.sessions} | ${s(shared.openMs)} | ${shared.graphMiB.toFixed(0)} |`,
    `| one graph per chunk position (${v.memory.positions} positions) | ${perPosition.sessions} | ${s(perPosition.openMs)} | ${perPosition.graphMiB.toFixed(0)} |`,
    '',
    `Chunk sharing saves ${(saving * 100).toFixed(0)}% of the NPU graphs' memory (llm.npu: −75% on Qwen1.5-1.8B); each further position's graphs add ${((perPosition.graphMiB - shared.graphMiB) / (v.memory.positions - 1)).toFixed(0)} MiB. The per-position graphs are the shared graph compiled once per position, the least such graphs can cost (a real per-position graph also differs in its attention).`,
    '',
    `| prefill ${v.prefill.promptTokens} tokens | ms (median) | tok/s | per prefill: NPU fused-graph runs | NPU busy ms | NPU throughput-model ms |`,
    '|---|---:|---:|---:|---:|---:|',
    `| CPU only (one session) | ${cpuMs.toFixed(0)} | ${((v.prefill.promptTokens * 1000) / cpuMs).toFixed(0)} | – | – | – |`,
    `| prefill on the virtual NPU, rest on the CPU | ${npuMs.toFixed(0)} | ${((v.prefill.promptTokens * 1000) / npuMs).toFixed(0)} | ${np.graphRuns.toFixed(0)} | ${np.busyMs.toFixed(0)} | ${np.modelledMs.toFixed(0)} |`,
    '',
    renderNpuSchedule(v.schedule)
  ].join('\n')
}
