/**
 * @file Turns the raw records into the results document (JSON: machine, limits, every rep) and its
 * markdown table (medians, Tandem / llama.cpp ratios against the issue's targets, noise, roofline shares).
 */
import { forwardFlops } from './gguf-summary'
import type { BenchModelId } from './models'
import { PEER_NAMES as PEERS, type LimitSamples, type PeerName } from './protocol'
import type { ModelRecord, PeerPhaseRecord, PhaseId, PhaseSpec } from './schedule'
import { renderModelSummary } from './report-models'
import { median, summarize, type Summary } from './stats'

/**
 * The issue's target ratios (Tandem ÷ llama.cpp): prefill 512 ≥ 1.2 for F32 and ≥ 1.0 for every other
 * type; decode ≥ 1.2 at 16 context and ≥ 1.5 at 1,024 for the quantized types. stories260K (0.26M
 * parameters, per-call overhead only) has none.
 */
export function targetRatio(model: BenchModelId, phase: PhaseId): number | null {
  if (model === 'stories260k') return null
  const f32 = model === 'f32'
  if (phase === 'prefill512') return f32 ? 1.2 : 1.0
  if (f32) return null
  if (phase === 'decodeShort') return 1.2
  if (phase === 'decode1024') return 1.5
  return null
}

/** Peak RSS target: Tandem's at most 1.25× llama.cpp's. */
export const PEAK_RSS_TARGET = 1.25

/**
 * Ceilings: the best sample over all limit probes of the run (start and end) and thread counts. Work
 * elsewhere on the machine only ever lowers a sample, so the maximum is the estimate of the ceiling.
 */
export interface Limits {
  /** best ORT ReduceSum read rate (GB/s) and its thread count */
  readonly bandwidthGBs: number
  readonly bandwidthThreads: number
  /** best plain read loop (memchr) rate and its thread count */
  readonly readLoopGBs: number
  readonly readLoopThreads: number
  /** the ceiling decode shares are computed against: the higher of the two probes */
  readonly decodeCeilingGBs: number
  readonly decodeCeilingProbe: 'ReduceSum' | 'read loop'
  readonly matmulGflops: number
  readonly matmulThreads: number
  /** per thread count: median, extremes and spread of every sample */
  readonly byThreads: ReadonlyArray<{ threads: number; bandwidthGBs: Summary; readLoopGBs: Summary; matmulGflops: Summary }>
}

/** Combines the limit probes run at the start and the end. */
export function combineLimits(runs: ReadonlyArray<readonly LimitSamples[]>): Limits {
  const threads = [...new Set(runs.flatMap((r) => r.map((s) => s.threads)))].sort((a, b) => a - b)
  const byThreads = threads.map((t) => {
    const of = runs.flatMap((r) => r.filter((s) => s.threads === t))
    return {
      threads: t,
      bandwidthGBs: summarize(of.flatMap((s) => s.bandwidthGBs)),
      readLoopGBs: summarize(of.flatMap((s) => s.readLoopGBs)),
      matmulGflops: summarize(of.flatMap((s) => s.matmulGflops))
    }
  })
  const best = (pick: (x: (typeof byThreads)[number]) => number): (typeof byThreads)[number] =>
    byThreads.reduce((a, b) => (pick(b) > pick(a) ? b : a))
  const bw = best((x) => x.bandwidthGBs.max)
  const rl = best((x) => x.readLoopGBs.max)
  const mm = best((x) => x.matmulGflops.max)
  const readLoopWins = rl.readLoopGBs.max > bw.bandwidthGBs.max
  return {
    bandwidthGBs: bw.bandwidthGBs.max,
    bandwidthThreads: bw.threads,
    readLoopGBs: rl.readLoopGBs.max,
    readLoopThreads: rl.threads,
    decodeCeilingGBs: readLoopWins ? rl.readLoopGBs.max : bw.bandwidthGBs.max,
    decodeCeilingProbe: readLoopWins ? 'read loop' : 'ReduceSum',
    matmulGflops: mm.matmulGflops.max,
    matmulThreads: mm.threads,
    byThreads
  }
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
  /** the peers that ran this phase */
  readonly peers: Readonly<Partial<Record<PeerName, PeerRow>>>
  /** Tandem median tok/s ÷ llama.cpp median tok/s (null when a peer did not run) */
  readonly ratio: number | null
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
    ? (100 * model.summary.weightBytesPerToken * tps.median) / (limits.decodeCeilingGBs * 1e9)
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
    const tandem = peers.tandem && peerRow(peers.tandem, phase, model, limits)
    const llama = peers['llama.cpp'] && peerRow(peers['llama.cpp'], phase, model, limits)
    const ratio = tandem && llama ? tandem.tps.median / llama.tps.median : null
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
      met: target === null || ratio === null ? null : ratio >= target,
      agreeingTokens: leadingAgreement(peers.tandem?.tokens ?? [], peers['llama.cpp']?.tokens ?? [])
    }
  })
}

export const PHASE_LABELS: Readonly<Record<PhaseId, string>> = {
  prefill128: 'prefill 128',
  prefill512: 'prefill 512',
  decodeShort: 'decode 128 @16',
  decode1024: 'decode 128 @1024'
}

/** Fixed-point number. */
export const fmt = (x: number, digits = 0): string => x.toFixed(digits)
/** Half the min–max spread as ± percent, or — for a single rep. */
const noise = (s: Summary): string => (s.n < 2 ? '—' : `±${fmt(s.spreadPct / 2)}%`)
const busyPct = (x: number | null): string => (x === null ? '?' : `${fmt(x)}%`)

/** What the markdown needs besides the rows. */
export interface MarkdownInput {
  readonly title: string
  readonly rows: readonly ResultRow[]
  readonly models: readonly ModelRecord[]
  readonly limits: Limits
  readonly machineLine: string
  readonly notes: readonly string[]
  /** sections placed after the per-model summary (e.g. the long-context check) */
  readonly extraSections?: readonly string[]
}

/** The results as markdown: per-model summary, every phase, loads, machine limits, notes. */
export function renderMarkdown(input: MarkdownInput): string {
  const { rows, limits } = input
  const out: string[] = [`# ${input.title}`, '', input.machineLine, '']
  const withTarget = rows.filter((r) => r.target !== null && r.met !== null)
  if (withTarget.length > 0) {
    const met = withTarget.filter((r) => r.met === true).length
    out.push(`Speed targets met: ${met} of ${withTarget.length}.`, '')
  }
  out.push(renderModelSummary(input.models, rows, limits), '')
  for (const section of input.extraSections ?? []) out.push(section, '')
  out.push(
    '## Every phase',
    '',
    '| model | phase | Tandem tok/s | llama.cpp tok/s | ratio | target | met? | threads T / L | TTFT ms T / L | noise T / L | other CPU T / L | % of limit T / L |',
    '|---|---|---:|---:|---:|---:|:-:|:-:|---:|---:|---:|---:|'
  )
  const either = <T>(r: ResultRow, f: (p: PeerRow) => T, show: (v: T) => string): string =>
    PEERS.map((p) => {
      const row = r.peers[p]
      return row ? show(f(row)) : '—'
    }).join(' / ')
  for (const r of rows) {
    const t = r.peers.tandem
    const l = r.peers['llama.cpp']
    const lowest = Math.min(t?.tps.median ?? Infinity, l?.tps.median ?? Infinity)
    const digits = lowest < 10 ? 2 : lowest < 100 ? 1 : 0
    out.push(
      `| ${r.label} | ${PHASE_LABELS[r.phase]} | ${t ? fmt(t.tps.median, digits) : '—'} | ${l ? fmt(l.tps.median, digits) : '—'} | ${r.ratio === null ? '—' : fmt(r.ratio, 2)} | ` +
        `${r.target === null ? '—' : `≥ ${fmt(r.target, 1)}`} | ${r.met === null ? '—' : r.met ? 'yes' : 'no'} | ${either(r, (p) => p.threads, String)} | ` +
        `${r.kind === 'prefill' ? either(r, (p) => p.ms.median, (v) => fmt(v)) : '—'} | ` +
        `${either(r, (p) => p.tps, noise)} | ${either(r, (p) => p.otherCpuPct, busyPct)} | ${either(r, (p) => p.limitSharePct, (v) => `${fmt(v, 1)}%`)} |`
    )
  }
  out.push(
    '',
    'Ratio = Tandem ÷ llama.cpp median tok/s; each peer at the thread count that won its probe (T / L). Noise = half the min–max',
    'spread of the measured reps, as % of the median. Other CPU = share of all cores used by other processes during the reps',
    '(median; work elsewhere on this shared machine slows whichever peer it overlaps). % of limit: decode = weight bytes per token × tok/s ÷ memory read',
    `bandwidth (${fmt(limits.decodeCeilingGBs, 1)} GB/s, the ${limits.decodeCeilingProbe} probe); prefill = useful FLOPs ÷ time ÷ MatMul rate ` +
      `(${fmt(limits.matmulGflops)} GFLOP/s, ${limits.matmulThreads} thread(s)); both limits are the best sample of the run.`,
    '',
    '## Machine limits',
    '',
    '| threads | ORT ReduceSum read GB/s best (median, noise) | plain read loop (memchr) GB/s best (median, noise) | MatMul GFLOP/s best (median, noise) |',
    '|---:|---:|---:|---:|'
  )
  const lim = (s: Summary, digits: number): string => `${fmt(s.max, digits)} (${fmt(s.median, digits)}, ${noise(s)})`
  for (const b of limits.byThreads) out.push(`| ${b.threads} | ${lim(b.bandwidthGBs, 1)} | ${lim(b.readLoopGBs, 1)} | ${lim(b.matmulGflops, 0)} |`)
  if (input.notes.length > 0) out.push('', 'Notes:', '', ...input.notes.map((n) => `- ${n}`))
  return `${out.join('\n')}\n`
}
