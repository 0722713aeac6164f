/**
 * @file SVG path data for the live utilization charts: a time series mapped onto a `width`×`height` box
 * whose right edge is `endMs` and left edge `endMs − windowMs`. A gap between samples longer than `gapMs`
 * (the app was idle and not sampling, or the page was hidden) breaks the line instead of drawing a slope
 * across it. Pure, so Vitest checks the geometry.
 */
import type { SeriesPoint } from './usage-ring'

/** The box and scales of one chart. */
export interface ChartFrame {
  /** the instant at the right edge (ms, the app's clock) */
  readonly endMs: number
  /** how much time the chart spans (ms) */
  readonly windowMs: number
  /** viewBox size (user units) */
  readonly width: number
  readonly height: number
  /** the value drawn at the top edge (100 for percent) */
  readonly maxValue: number
  /** consecutive samples further apart than this (ms) are not joined */
  readonly gapMs: number
}

/** The outline (`line`, stroked) and the area under it (`area`, filled); '' when nothing is in view. */
export interface ChartPaths {
  readonly line: string
  readonly area: string
}

/** One decimal is plenty for a chart a few hundred pixels wide, and keeps the path short. */
const num = (v: number): string => (Math.round(v * 10) / 10).toString()

/** Path data for `points` (oldest first) in `frame`. */
export function chartPaths(points: readonly SeriesPoint[], frame: ChartFrame): ChartPaths {
  const { endMs, windowMs, width, height, maxValue, gapMs } = frame
  const startMs = endMs - windowMs
  const x = (atMs: number): number => (width * (atMs - startMs)) / windowMs
  const y = (value: number): number => height - height * Math.min(1, Math.max(0, maxValue > 0 ? value / maxValue : 0))
  const runs: { x: number; y: number }[][] = []
  let run: { x: number; y: number }[] = []
  let previousMs: number | null = null
  for (const p of points) {
    if (p.atMs < startMs || p.atMs > endMs) continue
    if (previousMs !== null && p.atMs - previousMs > gapMs && run.length > 0) {
      runs.push(run)
      run = []
    }
    run.push({ x: x(p.atMs), y: y(p.value) })
    previousMs = p.atMs
  }
  if (run.length > 0) runs.push(run)
  const line: string[] = []
  const area: string[] = []
  for (const r of runs) {
    const first = r[0]
    const last = r.at(-1)
    if (first === undefined || last === undefined) continue
    // a lone sample is drawn as a short flat step, so it is visible
    const pts = r.length === 1 ? [first, { x: Math.min(width, first.x + 2), y: first.y }] : r
    const body = pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${num(p.x)} ${num(p.y)}`).join(' ')
    line.push(body)
    const end = pts.at(-1) ?? last
    area.push(`M${num(first.x)} ${num(height)} ${body.replace(/^M/, 'L')} L${num(end.x)} ${num(height)} Z`)
  }
  return { line: line.join(' '), area: area.join(' ') }
}
