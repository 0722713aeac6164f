/**
 * @file Turns the raw records into the results document (JSON: machine, limits, every rep) and its
 * markdown table (medians, Tandem / llama.cpp ratios against the issue's targets, noise, roofline shares).
 */
import { forwardFlops } from './gguf-summary'
import type { BenchModelId } from './models'
import type { LimitSamples, PeerName } from './protocol'
import type { ModelRecord, PeerPhaseRecord, PhaseId, PhaseSpec } from './schedule'
import { median, summarize, type Summary } from './stats'

/** Decode targets (Tandem / llama.cpp), both context lengths, on the 110M models. */
const DECODE_TARGETS: Partial<Record<BenchModelId, number>> = { f32: 1.5, q8_0: 1.5, q4_0: 1.2 }
/** Prefill targets at 512 tokens, on the 110M models. */
const PREFILL_512_TARGETS: Partial<Record<BenchModelId, number>> = { f32: 1.2, q8_0: 1.0, q4_0: 1.0 }

/** The issue's target ratio for a model and phase, or null where it sets none. */
export function targetRatio(model: BenchModelId, phase: PhaseId): number | null {
  if (phase === 'decodeShort' || phase === 'decode1024') return DECODE_TARGETS[model] ?? null
  if (phase === 'prefill512') return PREFILL_512_TARGETS[model] ?? null
  return null
}

/**
 * Ceilings: the best sample over all limit probes of the run (start and end) and thread counts. Work
 * elsewhere on the machine only ever lowers a sample, so the maximum is the estimate of the ceiling.
 */
export interface Limits {
  readonly bandwidthGBs: number
  readonly bandwidthThreads: number
  readonly matmulGflops: number
  readonly matmulThreads: number
  /** per thread count: median, extremes and spread of every sample */
  readonly byThreads: ReadonlyArray<{ threads: number; bandwidthGBs: Summary; matmulGflops: Summary }>
}

/** Combines the limit probes run at the start and the end. */
export function combineLimits(runs: ReadonlyArray<readonly LimitSamples[]>): Limits {
  const threads = [...new Set(runs.flatMap((r) => r.map((s) => s.threads)))].sort((a, b) => a - b)
  const byThreads = threads.map((t) => {
    const of = runs.flatMap((r) => r.filter((s) => s.threads === t))
    return { threads: t, bandwidthGBs: summarize(of.flatMap((s) => s.bandwidthGBs)), matmulGflops: summarize(of.flatMap((s) => s.matmulGflops)) }
  })
  const best = (pick: (x: (typeof byThreads)[number]) => number): (typeof byThreads)[number] =>
    byThreads.reduce((a, b) => (pick(b) > pick(a) ? b : a))
  const bw = best((x) => x.bandwidthGBs.max)
  const mm = best((x) => x.matmulGflops.max)
  return { bandwidthGBs: bw.bandwidthGBs.max, bandwidthThreads: bw.threads, matmulGflops: mm.matmulGflops.max, matmulThreads: mm.threads, byThreads }
}

/** One peer's figures in one row. */
export interface PeerRow {
  readonly threads: number
  /** milliseconds of each measured rep, as timed in the peer's process */
  readonly repMs: readonly number[]
  /** tokens per second of each rep */
  readonly tokensPerSecond: readonly number[]
  readonly tps: Summary
  /** prefill: milliseconds until the first greedy token (time to first token); decode: ms per token */
  readonly ms: Summary
  /** decode: weight bytes per token × tok/s ÷ bandwidth limit; prefill: useful FLOPs ÷ time ÷ FLOP limit (percent) */
  readonly limitSharePct: number
  /** median percent of all cores other processes used during the reps (null without /proc) */
  readonly otherCpuPct: number | null
  /** the same, per rep */
  readonly otherCpuPctPerRep: readonly (number | null)[]
  readonly probeMs: Readonly<Record<string, readonly number[]>>
  readonly contextPrefillMs: number | null
}

/** One table row. */
export interface ResultRow {
  readonly model: BenchModelId
  readonly label: string
  readonly phase: PhaseId
  readonly kind: PhaseSpec['kind']
  readonly tokens: number
  readonly steps: number
  readonly peers: Readonly<Record<PeerName, PeerRow>>
  /** Tandem median tok/s ÷ llama.cpp median tok/s */
  readonly ratio: number
  readonly target: number | null
  readonly met: boolean | null
  /** greedy tokens identical from the start (prefill: 1 or 0; decode: leading run of the first rep) */
  readonly agreeingTokens: number
}

function leadingAgreement(a: readonly number[], b: readonly number[]): number {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

function peerRow(rec: PeerPhaseRecord, phase: PhaseSpec, model: ModelRecord, limits: Limits): PeerRow {
  const count = phase.kind === 'prefill' ? phase.tokens : phase.steps
  const tokensPerSecond = rec.ms.map((ms) => count / (ms / 1000))
  const tps = summarize(tokensPerSecond)
  const perCallMs = rec.ms.map((ms) => (phase.kind === 'prefill' ? ms : ms / phase.steps))
  const limitSharePct = phase.kind === 'decode'
    ? (100 * model.summary.weightBytesPerToken * tps.median) / (limits.bandwidthGBs * 1e9)
    : (100 * forwardFlops(model.summary, phase.tokens) * (tps.median / phase.tokens)) / (limits.matmulGflops * 1e9)
  const busy = rec.otherCpuPct.filter((x): x is number => x !== null)
  return {
    threads: rec.threads,
    repMs: rec.ms,
    tokensPerSecond,
    tps,
    ms: summarize(perCallMs),
    limitSharePct,
    otherCpuPct: busy.length === 0 ? null : median(busy),
    otherCpuPctPerRep: rec.otherCpuPct,
    probeMs: rec.probeMs,
    contextPrefillMs: rec.contextPrefillMs
  }
}

/** Rows of one model. */
export function modelRows(model: ModelRecord, limits: Limits): ResultRow[] {
  return model.phases.map(({ phase, peers }) => {
    const tandem = peerRow(peers.tandem, phase, model, limits)
    const llama = peerRow(peers['llama.cpp'], phase, model, limits)
    const ratio = tandem.tps.median / llama.tps.median
    const target = targetRatio(model.model.id, phase.id)
    return {
      model: model.model.id,
      label: model.model.label,
      phase: phase.id,
      kind: phase.kind,
      tokens: phase.tokens,
      steps: phase.steps,
      peers: { tandem, 'llama.cpp': llama },
      ratio,
      target,
      met: target === null ? null : ratio >= target,
      agreeingTokens: leadingAgreement(peers.tandem.tokens, peers['llama.cpp'].tokens)
    }
  })
}

const PHASE_LABELS: Readonly<Record<PhaseId, string>> = {
  prefill128: 'prefill 128',
  prefill512: 'prefill 512',
  decodeShort: 'decode 128 @16',
  decode1024: 'decode 128 @1024'
}

const fmt = (x: number, digits = 0): string => x.toFixed(digits)
/** Half the min–max spread as ± percent, or — for a single rep. */
const noise = (s: Summary): string => (s.n < 2 ? '—' : `±${fmt(s.spreadPct / 2)}%`)
const busyPct = (x: number | null): string => (x === null ? '?' : `${fmt(x)}%`)
const mb = (bytes: number | null): string => (bytes === null ? '—' : `${Math.round(bytes / 2 ** 20)}`)

/** What the markdown needs besides the rows. */
export interface MarkdownInput {
  readonly title: string
  readonly rows: readonly ResultRow[]
  readonly models: readonly ModelRecord[]
  readonly limits: Limits
  readonly machineLine: string
  readonly notes: readonly string[]
}

/** The results as markdown tables. */
export function renderMarkdown(input: MarkdownInput): string {
  const { rows, limits } = input
  const out: string[] = [`# ${input.title}`, '', input.machineLine, '']
  const withTarget = rows.filter((r) => r.target !== null)
  if (withTarget.length > 0) {
    const met = withTarget.filter((r) => r.met === true).length
    out.push(`Targets met: ${met} of ${withTarget.length}.`, '')
  }
  out.push(
    '| model | phase | Tandem tok/s | llama.cpp tok/s | ratio | target | met? | threads T / L | TTFT ms T / L | noise T / L | other CPU T / L | % of limit T / L |',
    '|---|---|---:|---:|---:|---:|:-:|:-:|---:|---:|---:|---:|'
  )
  for (const r of rows) {
    const t = r.peers.tandem
    const l = r.peers['llama.cpp']
    const digits = t.tps.median < 10 || l.tps.median < 10 ? 2 : t.tps.median < 100 || l.tps.median < 100 ? 1 : 0
    out.push(
      `| ${r.label} | ${PHASE_LABELS[r.phase]} | ${fmt(t.tps.median, digits)} | ${fmt(l.tps.median, digits)} | ${fmt(r.ratio, 2)} | ` +
        `${r.target === null ? '—' : `≥ ${fmt(r.target, 1)}`} | ${r.met === null ? '—' : r.met ? 'yes' : 'no'} | ${t.threads} / ${l.threads} | ` +
        `${r.kind === 'prefill' ? `${fmt(t.ms.median)} / ${fmt(l.ms.median)}` : '—'} | ` +
        `${noise(t.tps)} / ${noise(l.tps)} | ${busyPct(t.otherCpuPct)} / ${busyPct(l.otherCpuPct)} | ${fmt(t.limitSharePct, 1)}% / ${fmt(l.limitSharePct, 1)}% |`
    )
  }
  out.push(
    '',
    'Ratio = Tandem ÷ llama.cpp median tok/s; each peer at the thread count that won its probe (T / L). Noise = half the min–max',
    'spread of the measured reps, as % of the median. Other CPU = share of all cores used by other processes during the reps',
    '(median; work elsewhere on this shared machine slows whichever peer it overlaps). % of limit: decode = weight bytes per token × tok/s ÷ memory read',
    `bandwidth (${fmt(limits.bandwidthGBs, 1)} GB/s, ${limits.bandwidthThreads} thread(s)); prefill = useful FLOPs ÷ time ÷ MatMul rate ` +
      `(${fmt(limits.matmulGflops)} GFLOP/s, ${limits.matmulThreads} thread(s)); both limits are the best sample of the run.`,
    '',
    '| model | Tandem first load s (graph cache) | Tandem cached load s | llama.cpp load s | peak RSS MB Tandem | peak RSS MB llama.cpp | model wall s |',
    '|---|---:|---:|---:|---:|---:|---:|'
  )
  for (const m of input.models) {
    const tandemLoads = m.loads.filter((l) => l.peer === 'tandem')
    const miss = tandemLoads.find((l) => l.details.graphCacheHit === false)
    const hit = tandemLoads.find((l) => l.details.graphCacheHit === true)
    const llamaLoads = m.loads.filter((l) => l.peer === 'llama.cpp')
    const peak = (peer: PeerName): number | null => {
      const v = m.loads.filter((l) => l.peer === peer).map((l) => l.peakRssBytes ?? 0)
      return v.length === 0 ? null : Math.max(...v)
    }
    const s = (ms: number | undefined): string => (ms === undefined ? '—' : fmt(ms / 1000, 1))
    out.push(
      `| ${m.model.label} | ${miss ? `${s(miss.loadMs)} (compile ${s(Number(miss.details.compileMs))})` : '—'} | ${s(hit?.loadMs)} | ` +
        `${llamaLoads.map((l) => s(l.loadMs)).join(' / ')} | ${mb(peak('tandem'))} | ${mb(peak('llama.cpp'))} | ${s(m.wallMs)} |`
    )
  }
  out.push('', '| threads | read bandwidth GB/s best (median, noise) | MatMul GFLOP/s best (median, noise) |', '|---:|---:|---:|')
  const lim = (s: Summary, digits: number): string => `${fmt(s.max, digits)} (${fmt(s.median, digits)}, ${noise(s)})`
  for (const b of limits.byThreads) out.push(`| ${b.threads} | ${lim(b.bandwidthGBs, 1)} | ${lim(b.matmulGflops, 0)} |`)
  if (input.notes.length > 0) out.push('', 'Notes:', '', ...input.notes.map((n) => `- ${n}`))
  return `${out.join('\n')}\n`
}
