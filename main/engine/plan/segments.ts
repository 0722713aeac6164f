/**
 * @file A phase of a Placement as the ordered list of segments the compiler and the runtime work from:
 * each maximal run of consecutive op groups on one device is one `run` segment carrying the graph's own
 * SegmentSpec (so everything on one device is exactly one segment, the whole model); each partitioned
 * matmul group is one `partition` segment: two parts that run in parallel on two devices, then a join.
 *
 * Partition parts use the unsplit group's SegmentSpec (same logical input and output names) plus a slice:
 * - rows: which rows/columns of each weight the part holds, and which feature range of each output it
 *   produces (see rows.ts for the per-group cut); the join concatenates along the last axis or adds;
 * - sequence: part a takes tokens [0, min(S, standardLength)) of the run — a fixed length, padded on a
 *   static-shape device — and part b the remaining S − standardLength tokens (skipped when there are none);
 *   the join concatenates along the token axis. The compiler needs nothing new for these: both parts are
 *   the plain single-group graph, run on a slice of the tokens.
 */
import { describeValue, modelOpGroups, partOutputOf, segmentSpec, VALUE, type GroupPart, type OpGroup, type SegmentSpec } from '../graph'
import type { ModelConfig } from '../model'
import { assignGroups, type MatmulGroup, type Partition, type Phase, type Placement } from './placement'
import { rowCuts, type WeightCut, type WeightName } from './rows'

/** A maximal run of op groups on one device: one ONNX graph. */
export interface RunSegment {
  readonly kind: 'run'
  readonly device: string
  readonly spec: SegmentSpec
}

/** The part of one weight a row-partition part holds: indices [start, end) along `axis` of W [N, K]. */
export interface WeightRange {
  readonly weight: WeightName
  /** 0 = rows (output features), 1 = columns (input features) */
  readonly axis: 0 | 1
  readonly start: number
  readonly end: number
}

/** The feature range [start, end) of an output value's last axis that a part produces. */
export interface OutputRange {
  readonly value: string
  readonly start: number
  readonly end: number
}

/** A row-partition part: its weight slices, its output slices, and how it treats the group's residual. */
export interface RowSlice {
  readonly by: 'rows'
  readonly weights: readonly WeightRange[]
  /** per output: the feature range produced (the full width for a 'sum' join) */
  readonly outputs: readonly OutputRange[]
  /**
   * 'slice': add the residual's features [start, end) (attn-out); 'whole': add the whole residual (ffn,
   * part a); 'none': no residual (ffn part b, qkv, lm-head)
   */
  readonly residual: 'slice' | 'whole' | 'none'
}

/** Fails to compile unless T is assignable to U. */
type Assignable<T extends U, U> = T

/** A RowSlice is the graph compiler's GroupPart: the runtime passes a part's slice to compileSegment as is. */
export type RowSliceAsGroupPart = Assignable<RowSlice, GroupPart>

/** A sequence-partition part: tokens [tokenStart, tokenStart + tokenCount) of the run (null = to the end). */
export interface TokenSlice {
  readonly by: 'sequence'
  readonly tokenStart: number
  readonly tokenCount: number | null
}

/** One of the two parallel halves of a partition. */
export interface PartSegment {
  readonly device: string
  readonly slice: RowSlice | TokenSlice
}

/** How the two parts' values become the group's output: concatenated along `axis`, or added. */
export type Join = { readonly value: string; readonly op: 'concat'; readonly axis: number } | { readonly value: string; readonly op: 'sum' }

/** One matmul group split between two devices: parts[0] runs on devices[0], where the join lands. */
export interface PartitionSegment {
  readonly kind: 'partition'
  readonly layer: number | null
  readonly group: MatmulGroup
  readonly by: 'rows' | 'sequence'
  /** the unsplit group's boundary: both parts read these inputs and produce (slices of) these outputs */
  readonly spec: SegmentSpec
  readonly parts: readonly [PartSegment, PartSegment]
  readonly joins: readonly Join[]
}

/** A segment of a phase, in execution order. */
export type PlanSegment = RunSegment | PartitionSegment

function rowParts(group: OpGroup, cuts: readonly WeightCut[], config: ModelConfig): { parts: [RowSlice, RowSlice]; joins: Join[] } {
  const weightsA = cuts.map((c) => ({ weight: c.weight, axis: c.axis, start: 0, end: c.cut }))
  const weightsB = cuts.map((c) => ({ weight: c.weight, axis: c.axis, start: c.cut, end: c.size }))
  if (group.kind === 'ffn') {
    // hidden units split: each part's down projection is a partial sum of the whole output
    const value = VALUE.layerOut(group.layer ?? -1)
    const outputs = [{ value, start: 0, end: config.dim }]
    return {
      parts: [
        { by: 'rows', weights: weightsA, outputs, residual: 'whole' },
        { by: 'rows', weights: weightsB, outputs, residual: 'none' }
      ],
      joins: [{ value, op: 'sum' }]
    }
  }
  const outputsA = cuts.map((c) => ({ value: partOutputOf(c.weight, group.layer ?? -1), start: 0, end: c.cut }))
  const outputsB = cuts.map((c) => ({ value: partOutputOf(c.weight, group.layer ?? -1), start: c.cut, end: c.size }))
  const residual = group.kind === 'attn-out' ? 'slice' : 'none'
  const joins: Join[] = outputsA.map((o) => ({ value: o.value, op: 'concat', axis: describeValue(config, o.value).dims.length - 1 }))
  return {
    parts: [
      { by: 'rows', weights: weightsA, outputs: outputsA, residual },
      { by: 'rows', weights: weightsB, outputs: outputsB, residual }
    ],
    joins
  }
}

function partitionSegment(group: OpGroup, partition: Partition, spec: SegmentSpec, config: ModelConfig): PartitionSegment {
  if (group.kind !== partition.group) throw new Error(`partition for ${partition.group} applied to ${group.kind}`)
  const kind = partition.group
  const [a, b] = partition.devices
  if (partition.by === 'rows') {
    const cuts = rowCuts(kind, partition.ratio, config)
    // parsePlacement rejects such ratios; a Placement built without it must not reach the compiler
    if (typeof cuts === 'string') throw new Error(`layer ${group.layer ?? 'final'} ${kind}: ${cuts}`)
    const { parts, joins } = rowParts(group, cuts, config)
    return { kind: 'partition', layer: group.layer, group: kind, by: 'rows', spec, parts: [{ device: a, slice: parts[0] }, { device: b, slice: parts[1] }], joins }
  }
  const joins: Join[] = spec.outputs.map((value) => ({ value, op: 'concat', axis: describeValue(config, value).dims.indexOf('seq') }))
  return {
    kind: 'partition',
    layer: group.layer,
    group: kind,
    by: 'sequence',
    spec,
    parts: [
      { device: a, slice: { by: 'sequence', tokenStart: 0, tokenCount: partition.standardLength } },
      { device: b, slice: { by: 'sequence', tokenStart: partition.standardLength, tokenCount: null } }
    ],
    joins
  }
}

/** The ordered segments of one phase of a (validated) placement. */
export function placementToSegments(placement: Placement, phase: Phase, config: ModelConfig): PlanSegment[] {
  const all = modelOpGroups(config)
  const assignments = assignGroups(placement.phases[phase], config)
  const segments: PlanSegment[] = []
  let run: OpGroup[] = []
  let runDevice = ''
  const flush = (): void => {
    if (run.length > 0) segments.push({ kind: 'run', device: runDevice, spec: segmentSpec(config, run, all) })
    run = []
  }
  assignments.forEach((a, i) => {
    // assignGroups builds groups from modelOpGroups too; use the same objects segmentSpec compares by identity
    const group = all[i]
    if (a.partition !== null) {
      flush()
      segments.push(partitionSegment(group, a.partition, segmentSpec(config, [group], all), config))
      return
    }
    if (a.device !== runDevice) flush()
    runDevice = a.device
    run.push(group)
  })
  flush()
  return segments
}
