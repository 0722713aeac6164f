/**
 * @file llm.npu's scheduling rows (ASPLOS'25 §3.4, Fig. 15): prefill on the "prefill on NPU" placement with the
 * virtual NPU (SIMULATED: it computes on this machine's CPU, its throughput model only adds time), chunks in
 * order and out of order, with float, W8A8 and W8A8 + shadow matmuls, the NPU's idle share (its bubbles), next
 * to CPU only and Auto. Measured in a child process (bench/npu-child.ts, mode 'schedule').
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DEFAULT_SHADOW_PRUNED_PERCENT } from '../main/engine/model'
import { STATIC_CHUNK_TOKENS } from '../main/engine/plan'
import { ensureBenchModel, MODEL_LABELS, type BenchModelId } from './models'
import { npuChild, VIRTUAL_NPU_BENCH_OPTIONS } from './npu-common'
import type { ScheduleRow } from './npu-child'
import { median } from './stats'

/** The model (float32 weights: the virtual NPU's default op list takes them; W8A8 quantizes them itself). */
const MODEL: BenchModelId = 'f32'
/** Prompt lengths (the 256 and 1,024). */
const PROMPTS = [256, 1024] as const
/** Corpus tokens the W8A8 calibration runs through the reference forward (seeded ids: the model is random too). */
const CALIBRATION_TOKENS = 64

/** What the rows measured. */
export interface NpuScheduleRecord {
  readonly model: string
  readonly chunk: number
  readonly options: Readonly<Record<string, string>>
  readonly layers: number
  readonly autoDevices: readonly string[]
  readonly reps: number
  readonly rows: readonly ScheduleRow[]
}

/** Runs the rows. */
export async function benchmarkNpuSchedule(options: { readonly modelsDir: string; readonly reps: number; readonly log: (line: string) => void }): Promise<NpuScheduleRecord> {
  const file = await ensureBenchModel(MODEL, options.modelsDir, options.log)
  const cacheDir = await mkdtemp(join(tmpdir(), 'tandem-bench-npu-schedule-'))
  const chunk = STATIC_CHUNK_TOKENS.default
  const reps = Math.max(2, options.reps)
  try {
    options.log(`npu: scheduling rows — prefill ${PROMPTS.join(' / ')} tokens, in order and out of order, float / W8A8 / W8A8 + shadow (${reps} reps)`)
    const r = await npuChild<{ rows: ScheduleRow[]; layers: number; autoDevices: string[] }>({
      mode: 'schedule',
      model: file.path,
      chunk,
      cacheDir,
      npuOptions: { ...VIRTUAL_NPU_BENCH_OPTIONS },
      promptTokens: [...PROMPTS],
      reps,
      calibrationTokens: CALIBRATION_TOKENS
    })
    return { model: MODEL_LABELS[MODEL], chunk, options: VIRTUAL_NPU_BENCH_OPTIONS, layers: r.layers, autoDevices: r.autoDevices, reps, rows: r.rows }
  } finally {
    await rm(cacheDir, { recursive: true, force: true })
  }
}

function label(row: ScheduleRow, layers: number): string {
  if (row.placement === 'cpu') return 'CPU only (one session)'
  if (row.placement === 'auto') return 'Auto (profiled here)'
  const matmuls = row.matmuls === 'float' ? 'float' : row.matmuls === 'w8a8' ? 'W8A8, no shadow' : `W8A8 + shadow in ${row.shadowLayers} of ${layers} layers`
  return `NPU prefill, ${matmuls}, ${row.order}`
}

const pct = (v: number | null): string => (v === null ? '–' : `${(v * 100).toFixed(1)}%`)

/** The rows as markdown. */
export function renderNpuSchedule(r: NpuScheduleRecord): string {
  const opts = Object.entries(r.options).map(([k, x]) => `${k}=${x}`).join(', ')
  const out = [
    `### Scheduling the NPU's prefill — SIMULATED (virtual NPU on this machine's CPU; ${r.model}; static chunk ${r.chunk}; throughput model ${opts}; median of ${r.reps})`,
    '',
    'Prefill on the NPU placement: the norms and matmuls on the virtual NPU, rope and attention (and the shadow segments) on the CPU. ' +
      '"in-order" runs one chunk at a time, each device taking its tasks in DAG order (llm.npu\'s baseline); "out-of-order" keeps two chunks in flight and lets each device start the ready task that unblocks the most-loaded device (llm.npu §3.4). ' +
      'NPU idle = 1 − the NPU worker\'s busy time ÷ the prefill\'s wall time (llm.npu: bubbles 37% in order → 0.7% out of order). ' +
      `W8A8 uses a calibration on ${CALIBRATION_TOKENS} seeded tokens; shadow layers by importance, ${DEFAULT_SHADOW_PRUNED_PERCENT}% pruned (llm.npu) or none pruned. Auto ran on ${r.autoDevices.join(', ')}.`,
    ''
  ]
  for (const n of PROMPTS) {
    const rows = r.rows.filter((x) => x.promptTokens === n)
    const cpu = rows.find((x) => x.placement === 'cpu')
    const cpuMs = cpu === undefined ? NaN : median(cpu.ms)
    out.push(`| prefill ${n} tokens | ms (median) | tok/s | vs CPU only | NPU idle | CPU busy ms |`, '|---|---:|---:|---:|---:|---:|')
    for (const row of rows) {
      const ms = median(row.ms)
      out.push(`| ${label(row, r.layers)} | ${ms.toFixed(0)} | ${((n * 1000) / ms).toFixed(0)} | ${(cpuMs / ms).toFixed(2)}× | ${pct(row.npuIdleShare)} | ${(row.busyMs.cpu ?? 0).toFixed(0)} |`)
    }
    out.push('')
  }
  out.push(
    'All devices here share two CPU cores (the virtual NPU computes on them too), so the NPU placement cannot beat CPU only on this machine: the rows compare schedules and measure the NPU path\'s overheads, not an NPU. On random weights the calibration finds few outliers, so the shadow segments do little arithmetic; their cost here is mostly launches and hand-offs.'
  )
  return out.join('\n')
}
