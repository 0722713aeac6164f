/** @file Small statistics for repeated timings: median, quartiles, spread. */

/** Summary of one set of samples. */
export interface Summary {
  readonly n: number
  readonly median: number
  readonly min: number
  readonly max: number
  /** (max − min) / median, in percent: the noise figure quoted in the tables */
  readonly spreadPct: number
  /** interquartile range / median, in percent (linear-interpolated quartiles) */
  readonly iqrPct: number
}

/** Linear-interpolated quantile of sorted values, q in [0, 1]. */
function quantile(sorted: readonly number[], q: number): number {
  const pos = (sorted.length - 1) * q
  const lo = Math.floor(pos)
  const hi = Math.ceil(pos)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
}

/** Median of `values` (throws on an empty list). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError('median of no values')
  return quantile([...values].sort((a, b) => a - b), 0.5)
}

/** Median, extremes and relative spreads of `values` (non-empty). */
export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) throw new RangeError('summary of no values')
  const sorted = [...values].sort((a, b) => a - b)
  const med = quantile(sorted, 0.5)
  const min = sorted[0]
  const max = sorted[sorted.length - 1]
  const pct = (x: number): number => (med === 0 ? 0 : (100 * x) / med)
  return { n: sorted.length, median: med, min, max, spreadPct: pct(max - min), iqrPct: pct(quantile(sorted, 0.75) - quantile(sorted, 0.25)) }
}
