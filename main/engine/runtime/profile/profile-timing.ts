/**
 * @file From one device's run medians to the group times the cost model adds up. The cost model charges
 * a segment `runOverheadMs` once plus the sum of its groups, so:
 *
 *   raw_g(S)   = run_g(S) − overhead                       (a one-group graph's own work, ms)
 *   scale(S)   = (run_stack(S) − overhead) / (k · Σ_layer-kinds raw_g(S)),  clamped to [MIN, 1]
 *   group_g(S) = raw_g(S) · scale(S)  for layer kinds,  raw_g(S) for final-norm and lm-head
 *
 * where run_stack is the first k layers (STACK_LAYERS) compiled as one segment. A one-group graph pays for inputs and
 * outputs a fused segment keeps internal, and misses ORT's fusions across group boundaries; the scale
 * makes the layer groups add up to what a fused segment costs (per-layer work dominates, so this keeps a
 * whole-model prediction near the measured whole-model time). Then every time is floored at
 * MIN_GROUP_MS and made non-decreasing in tokens (more tokens never take less time; noise is flattened).
 * A partition part's graph is a one-group graph too, so it gets exactly its group's treatment:
 * part_g(S) = (run_part(S) − overhead) · scale(S) for layer kinds, floored and non-decreasing alike.
 */
import { LAYER_GROUP_KINDS, type GroupKind } from '../../graph'
import type { GroupTiming, MatmulGroup, PartitionTiming, TimingSample } from '../../plan'

/** One measurement: the median wall time of a whole session run of `tokens` tokens, ms. */
export interface RunSample {
  readonly tokens: number
  readonly ms: number
}

/** Smallest group time recorded (ms): a group never costs nothing. */
export const MIN_GROUP_MS = 0.001
/** Smallest calibration scale believed: a fused segment is not 20× cheaper than its groups alone (noise). */
export const MIN_CALIBRATION_SCALE = 0.05

/** Group times from (already overhead-free) samples: floored at MIN_GROUP_MS, non-decreasing in tokens. */
function monotone(samples: readonly TimingSample[]): TimingSample[] {
  let floor = MIN_GROUP_MS
  return samples.map((s) => {
    floor = Math.max(floor, s.ms)
    return { tokens: s.tokens, ms: floor }
  })
}

/** Group times from run medians without calibration: minus the run overhead, floored, non-decreasing. */
export function groupSamples(runs: readonly RunSample[], runOverheadMs: number): TimingSample[] {
  return monotone(runs.map((r) => ({ tokens: r.tokens, ms: r.ms - runOverheadMs })))
}

/**
 * The calibration scale per run length (see the file comment); 1 where it cannot be computed (the stack
 * or a layer group was not measured at that length, or the groups' raw sum is not positive).
 */
export function calibrationScales(stack: readonly RunSample[] | undefined, groups: ReadonlyMap<GroupKind, readonly RunSample[]>, runOverheadMs: number, stackLayers: number): Map<number, number> {
  const scales = new Map<number, number>()
  for (const s of stack ?? []) {
    let parts = 0
    let complete = true
    for (const kind of LAYER_GROUP_KINDS) {
      const run = groups.get(kind)?.find((r) => r.tokens === s.tokens)
      if (run === undefined) complete = false
      else parts += Math.max(0, run.ms - runOverheadMs)
    }
    const fused = Math.max(0, s.ms - runOverheadMs)
    scales.set(s.tokens, complete && parts > 0 ? Math.min(1, Math.max(MIN_CALIBRATION_SCALE, fused / (stackLayers * parts))) : 1)
  }
  return scales
}

/** One one-group graph's runs as group times: minus the overhead, scaled when a layer kind, floored, non-decreasing. */
function calibrated(group: GroupKind, runs: readonly RunSample[], scales: ReadonlyMap<number, number>, runOverheadMs: number): TimingSample[] {
  const layerKind = LAYER_GROUP_KINDS.includes(group)
  return monotone(runs.map((r) => ({ tokens: r.tokens, ms: (r.ms - runOverheadMs) * (layerKind ? (scales.get(r.tokens) ?? 1) : 1) })))
}

/** Every measured group's timing on one device, calibrated against the layer stack (see the file comment). */
export function deviceGroupTimings(groups: ReadonlyMap<GroupKind, readonly RunSample[]>, stack: readonly RunSample[] | undefined, runOverheadMs: number, stackLayers: number): GroupTiming[] {
  const scales = calibrationScales(stack, groups, runOverheadMs, stackLayers)
  return [...groups].map(([group, runs]) => ({ group, samples: calibrated(group, runs, scales, runOverheadMs) }))
}

/** A measured partition part: the share of its group's rows it holds and its run medians. */
export interface PartRuns {
  readonly share: number
  readonly runs: readonly RunSample[]
}

/**
 * Every measured partition part's timing on one device, calibrated like its group (see the file comment);
 * a part whose whole group was not measured there is left out (the cost model interpolates between the two).
 */
export function devicePartitionTimings(parts: ReadonlyMap<MatmulGroup, PartRuns>, groups: ReadonlyMap<GroupKind, readonly RunSample[]>, stack: readonly RunSample[] | undefined, runOverheadMs: number, stackLayers: number): PartitionTiming[] {
  const scales = calibrationScales(stack, groups, runOverheadMs, stackLayers)
  return [...parts].filter(([group]) => groups.has(group)).map(([group, { share, runs }]) => ({ group, share, samples: calibrated(group, runs, scales, runOverheadMs) }))
}
