/** @file Command-line flags of `npm run bench`. */
import { BENCH_MODEL_GROUPS, BENCH_MODEL_IDS, DEFAULT_BENCH_MODELS, type BenchModelId } from './models'

/** Parsed flags. */
export interface BenchArgs {
  readonly models: readonly BenchModelId[]
  /** measured repetitions per phase and peer */
  readonly reps: number
  /** probe (warm-up and thread choice) rounds */
  readonly probeRounds: number
  /** results folder */
  readonly outDir: string | null
  readonly quick: boolean
  /** rounds of the Placements section (each: every placement's prefill and decode) */
  readonly placementReps: number
  /** run the Placements section (default true; --no-placements skips it) */
  readonly placements: boolean
  /** --only placements: just that section (no peers, no machine limits, no model table) */
  readonly onlyPlacements: boolean
  /** run the long-context check (an 8k-token prompt on the Llama-3.2-1B shape; default on, off with --quick) */
  readonly longContext: boolean
  /** --only long-context: that check alone */
  readonly onlyLongContext: boolean
  /** run the NPU-path section (the gates, the virtual NPU; default off, --virtual-npu) */
  readonly virtualNpu: boolean
  /** --only virtual-npu: that section alone */
  readonly onlyVirtualNpu: boolean
  /** --only npu-schedule: the NPU section's scheduling rows alone */
  readonly onlyNpuSchedule: boolean
  /** --only kv-snapshots: continuing a conversation, KV snapshot restore vs recompute */
  readonly onlyKvSnapshots: boolean
  /** --only summaries: a 50-page PDF summarized map-reduce by the 110M shape */
  readonly onlySummaries: boolean
}

/** Most repetitions accepted (each is a full prefill or 128-token decode per peer). */
const MAX_REPS = 50

export const USAGE = `usage: npm run bench -- [--quick] [--models LIST] [--reps N] [--out DIR]
                       [--placement-reps N] [--no-placements | --only placements] [--no-long-context | --only long-context]
                       [--virtual-npu | --only virtual-npu]
  --quick     stories260K + the 110M Q4_0 model, 1 repetition, no long-context check (smoke run)
  --models    comma-separated models or groups (default: ${DEFAULT_BENCH_MODELS.join(',')})
              models: ${BENCH_MODEL_IDS.join(', ')}
              groups: ${Object.keys(BENCH_MODEL_GROUPS).join(', ')} (e.g. --models default,3b,8b adds the 3B and 8B shapes to the default run)
  --reps N    measured repetitions per phase and peer (default 3)
  --out DIR   results folder (default bench/results)
  --placement-reps N rounds of the Placements section (default 5, --quick 2)
  --no-placements    skip the Placements section (presets + Auto on stories260K, hand-off latency; a few minutes)
  --only placements  run only the Placements section (written as <date>-placements.{json,md})
  --no-long-context  skip the long-context check (an 8,192-token prompt on the Llama-3.2-1B Q4_K_M shape, both peers)
  --only long-context run only that check (written as <date>-long-context.{json,md})
  --virtual-npu      add the NPU-path section: decode/prefill through our C-API binding vs onnxruntime-node, and the
                     virtual NPU (simulated: it runs on the CPU) — EP-context cache cold/warm, chunk-sharing memory,
                     prefill on the NPU placement (builds the test provider with the system C++ compiler)
  --only virtual-npu run only that section (written as <date>-virtual-npu.{json,md})
  --only npu-schedule run only its scheduling rows: NPU prefill in order / out of order, float / W8A8 / W8A8 + shadow,
                     next to CPU only and Auto (written as <date>-npu-schedule.{json,md})
  --only kv-snapshots time to first token continuing a conversation of 256 … 4k tokens, KV snapshot restore vs
                     recompute, snapshot bytes, save and restore times (written as <date>-kv-snapshots.{json,md})
  --only summaries   a 50-page PDF summarized by the 110M shape: time per page, parts, prefill vs decode
                     (written as <date>-summaries.{json,md})`

function isModelId(s: string): s is BenchModelId {
  return BENCH_MODEL_IDS.some((id) => id === s)
}

/** Parses argv (without node and script); throws with the usage on bad input. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  let models: BenchModelId[] | null = null
  let reps: number | null = null
  let placementReps: number | null = null
  let outDir: string | null = null
  let quick = false
  let placements = true
  let onlyPlacements = false
  let longContext: boolean | null = null
  let onlyLongContext = false
  let virtualNpu = false
  let onlyVirtualNpu = false
  let onlyNpuSchedule = false
  let onlyKvSnapshots = false
  let onlySummaries = false
  const value = (i: number, flag: string): string => {
    const v = argv[i + 1]
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value\n${USAGE}`)
    return v
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    if (a === '--quick') quick = true
    else if (a === '--models') {
      const list = value(i++, a).split(',').map((s) => s.trim().toLowerCase()).filter((s) => s.length > 0)
      const bad = list.filter((s) => !isModelId(s) && !(s in BENCH_MODEL_GROUPS))
      if (bad.length > 0 || list.length === 0) throw new Error(`unknown model(s) ${bad.join(', ')}; known: ${BENCH_MODEL_IDS.join(', ')}\n${USAGE}`)
      const chosen = new Set<string>(list.flatMap((s) => BENCH_MODEL_GROUPS[s] ?? [s]))
      models = BENCH_MODEL_IDS.filter((id) => chosen.has(id))
    } else if (a === '--reps') {
      const n = Number(value(i++, a))
      if (!Number.isInteger(n) || n < 1 || n > MAX_REPS) throw new Error(`--reps must be an integer in [1, ${MAX_REPS}]\n${USAGE}`)
      reps = n
    } else if (a === '--placement-reps') {
      const n = Number(value(i++, a))
      if (!Number.isInteger(n) || n < 1 || n > MAX_REPS) throw new Error(`--placement-reps must be an integer in [1, ${MAX_REPS}]\n${USAGE}`)
      placementReps = n
    } else if (a === '--out') outDir = value(i++, a)
    else if (a === '--no-placements') placements = false
    else if (a === '--no-long-context') longContext = false
    else if (a === '--virtual-npu') virtualNpu = true
    else if (a === '--only') {
      const what = value(i++, a)
      if (what === 'placements') onlyPlacements = true
      else if (what === 'long-context') onlyLongContext = true
      else if (what === 'virtual-npu') onlyVirtualNpu = true
      else if (what === 'npu-schedule') onlyNpuSchedule = true
      else if (what === 'kv-snapshots') onlyKvSnapshots = true
      else if (what === 'summaries') onlySummaries = true
      else throw new Error(`--only takes "placements", "long-context", "virtual-npu", "npu-schedule", "kv-snapshots" or "summaries", got ${what}\n${USAGE}`)
    } else if (a === '--help' || a === '-h') throw new Error(USAGE)
    else throw new Error(`unknown argument ${a}\n${USAGE}`)
  }
  if (onlyPlacements && !placements) throw new Error(`--only placements and --no-placements exclude each other\n${USAGE}`)
  if (onlyLongContext && longContext === false) throw new Error(`--only long-context and --no-long-context exclude each other\n${USAGE}`)
  const only = onlyPlacements || onlyLongContext || onlyVirtualNpu || onlyNpuSchedule || onlyKvSnapshots || onlySummaries
  if ([onlyPlacements, onlyLongContext, onlyVirtualNpu, onlyNpuSchedule, onlyKvSnapshots, onlySummaries].filter(Boolean).length > 1) throw new Error(`--only takes one section\n${USAGE}`)
  if (only && models !== null) throw new Error(`--only runs no model table; drop --models\n${USAGE}`)
  return {
    models: only ? [] : (models ?? (quick ? ['stories260k', 'q4_0'] : DEFAULT_BENCH_MODELS)),
    reps: reps ?? (quick ? 1 : 3),
    probeRounds: quick ? 1 : 2,
    placementReps: placementReps ?? (quick ? 2 : 5),
    outDir,
    quick,
    placements,
    onlyPlacements,
    longContext: onlyLongContext || (longContext ?? !quick),
    onlyLongContext,
    virtualNpu: virtualNpu || onlyVirtualNpu,
    onlyVirtualNpu,
    onlyNpuSchedule,
    onlyKvSnapshots,
    onlySummaries
  }
}
