/**
 * @file One small area chart of the live view: a value over the last 60 s, right edge = the newest sample.
 * An image to assistive technology, named with what it shows and the current and peak values (which are
 * also printed beside it as text).
 */
import type { JSX } from 'react'
import { chartPaths } from '../lib/chart-path'
import { LIMITS } from '../lib/limits'
import type { SeriesPoint } from '../lib/usage-ring'

/** viewBox size; the SVG stretches to its box (non-scaling strokes keep lines crisp). */
const VIEW_WIDTH = 240
const VIEW_HEIGHT = 40

/** Samples further apart than this (ms) are not joined: nothing was sampled in between. */
const GAP_MS = 4 * 1000

interface UsageChartProps {
  readonly points: readonly SeriesPoint[]
  /** the right edge (ms, the app's clock): the newest sample of all series, so charts line up */
  readonly endMs: number
  /** value at the top edge */
  readonly maxValue: number
  /** accessible name, including the values */
  readonly label: string
  /** palette slot (CSS class series-N) */
  readonly tone: number
}

/** The chart. */
export function UsageChart({ points, endMs, maxValue, label, tone }: UsageChartProps): JSX.Element {
  const { line, area } = chartPaths(points, { endMs, windowMs: LIMITS.usageWindowMs, width: VIEW_WIDTH, height: VIEW_HEIGHT, maxValue, gapMs: GAP_MS })
  return (
    <svg className={`usage-chart series-${tone}`} role="img" aria-label={label} viewBox={`0 0 ${VIEW_WIDTH} ${VIEW_HEIGHT}`} preserveAspectRatio="none">
      <line className="usage-grid" x1="0" x2={VIEW_WIDTH} y1={VIEW_HEIGHT / 2} y2={VIEW_HEIGHT / 2} vectorEffect="non-scaling-stroke" />
      {area !== '' && <path className="usage-area" d={area} />}
      {line !== '' && <path className="usage-line" d={line} vectorEffect="non-scaling-stroke" />}
    </svg>
  )
}
