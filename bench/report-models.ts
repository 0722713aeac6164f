/**
 * @file The per-model summary table of the bench report: one line per model and weight type with the
 * issue's figures side by side (prefill 512, TTFT, decode at 16 and 1,024 context, decode as a share of
 * the measured memory bandwidth, first and cached load, peak RSS), Tandem / llama.cpp and their ratio,
 * and what failed where a peer could not load or run.
 */
import type { Limits, PeerRow, ResultRow } from './report'
import { fmt, PEAK_RSS_TARGET } from './report'
import type { LoadRecord, ModelRecord, PhaseId } from './schedule'
import { median } from './stats'

const MIB = 2 ** 20

/** Ratio with two decimals, or — when a side is missing. */
function ratio(t: number | null | undefined, l: number | null | undefined): string {
  return t === null || t === undefined || l === null || l === undefined || l === 0 ? '—' : `${fmt(t / l, 2)}×`
}

/** tok/s with as many decimals as its size needs. */
function tps(x: number | null | undefined): string {
  if (x === null || x === undefined) return '—'
  return fmt(x, x < 10 ? 2 : x < 100 ? 1 : 0)
}

const seconds = (ms: number | null | undefined): string => (ms === null || ms === undefined ? '—' : fmt(ms / 1000, 1))
const mib = (bytes: number | null | undefined): string => (bytes === null || bytes === undefined ? '—' : fmt(bytes / MIB))

/** "T / L (ratio)" of one figure of one phase (higher is better for Tandem when `tandemOverLlama`). */
function pair(row: ResultRow | undefined, pick: (p: PeerRow) => number, show: (x: number | null) => string, withRatio: boolean): string {
  const t = row?.peers.tandem
  const l = row?.peers['llama.cpp']
  const tv = t ? pick(t) : null
  const lv = l ? pick(l) : null
  return `${show(tv)} / ${show(lv)}${withRatio ? ` (${ratio(tv, lv)})` : ''}`
}

function medianOf(loads: readonly LoadRecord[]): number | null {
  return loads.length === 0 ? null : median(loads.map((l) => l.loadMs))
}

function maxPeak(loads: readonly LoadRecord[]): number | null {
  const v = loads.map((l) => l.peakRssBytes).filter((x): x is number => x !== null)
  return v.length === 0 ? null : Math.max(...v)
}

/** The per-model summary (markdown), with a legend below it. */
export function renderModelSummary(models: readonly ModelRecord[], rows: readonly ResultRow[], limits: Limits): string {
  const out: string[] = [
    '## Per model',
    '',
    '| model | file GB (written in s) | prefill 512 tok/s T / L (ratio) | TTFT 512 ms T / L | decode @16 tok/s T / L (ratio) | decode @1024 tok/s T / L (ratio) | ' +
      'decode @16 % of bandwidth T / L | first load s T (compile) | cached load s T / load s L | peak RSS MiB T first load / T run / L (ratio) | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|'
  ]
  for (const m of models) {
    const row = (phase: PhaseId): ResultRow | undefined => rows.find((r) => r.model === m.model.id && r.phase === phase)
    const tandemRuns = m.loads.filter((l) => l.peer === 'tandem')
    const llamaRuns = m.loads.filter((l) => l.peer === 'llama.cpp')
    const cold = m.coldLoad
    const compileMs = cold && typeof cold.details.compileMs === 'number' ? cold.details.compileMs : null
    const tandemPeak = [cold?.peakRssBytes ?? null, maxPeak(tandemRuns)].filter((x): x is number => x !== null)
    const llamaPeak = maxPeak(llamaRuns)
    const worstTandem = tandemPeak.length === 0 ? null : Math.max(...tandemPeak)
    const rssRatio = ratio(worstTandem, llamaPeak)
    const rssMet = worstTandem !== null && llamaPeak !== null ? (worstTandem / llamaPeak <= PEAK_RSS_TARGET ? '' : ' ✗') : ''
    const errors = Object.entries(m.errors).map(([k, v]) => `${k}: ${v.replace(/\|/g, '/')}`).join('; ')
    out.push(
      `| ${m.model.label} | ${fmt(m.model.sizeBytes / 1e9, m.model.sizeBytes < 1e8 ? 3 : 2)} (${m.model.generatedMs === null ? '—' : seconds(m.model.generatedMs)}) | ` +
        `${pair(row('prefill512'), (p) => p.tps.median, tps, true)} | ${pair(row('prefill512'), (p) => p.ms.median, (x) => (x === null ? '—' : fmt(x)), false)} | ` +
        `${pair(row('decodeShort'), (p) => p.tps.median, tps, true)} | ${pair(row('decode1024'), (p) => p.tps.median, tps, true)} | ` +
        `${pair(row('decodeShort'), (p) => p.limitSharePct, (x) => (x === null ? '—' : `${fmt(x)}%`), false)} | ` +
        `${seconds(cold?.loadMs)}${compileMs === null ? '' : ` (${seconds(compileMs)})`} | ${seconds(medianOf(tandemRuns))} / ${seconds(medianOf(llamaRuns))} | ` +
        `${mib(cold?.peakRssBytes)} / ${mib(maxPeak(tandemRuns))} / ${mib(llamaPeak)} (${rssRatio}${rssMet}) | ${errors === '' ? '—' : errors} |`
    )
  }
  out.push(
    '',
    'T = Tandem, L = llama.cpp; medians of the measured reps. TTFT = time to the first greedy token of a 512-token prompt (the prefill 512 row).',
    `Decode % of bandwidth = weight bytes per token × tok/s ÷ ${fmt(limits.decodeCeilingGBs, 1)} GB/s (the ${limits.decodeCeilingProbe} probe, ` +
      `the higher of ORT ReduceSum ${fmt(limits.bandwidthGBs, 1)} GB/s and the plain read loop ${fmt(limits.readLoopGBs, 1)} GB/s).`,
    'First load = Tandem opening the file with an empty graph cache (compiles the graph; a child of its own that only loads); cached load = ' +
      'the measured children opening it again with the cache warm; llama.cpp = its model + context load. Peak RSS = the child\'s VmHWM: ' +
      `Tandem's first-load child, Tandem's measured child (cached load + every phase at a 2,048-position context), llama.cpp's; ratio = the larger Tandem figure ÷ llama.cpp's (✗: above the ${PEAK_RSS_TARGET}× target).`,
    'File GB = the GGUF on disk; written in = the seconds the fixture writer took (once; the file is cached in bench/.models).'
  )
  return out.join('\n')
}
