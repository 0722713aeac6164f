/**
 * @file The graphs the profiler times, compiled once per graph target (the CPU graph or the WebGPU one)
 * on the caller's thread: the trivial overhead graph (one Add), each op-group kind as a single-group
 * segment (layer 0's seven, then final-norm and lm-head), part a of a row partition of each matmul group
 * at PROFILE_PART_RATIO (layer 0's, and the final lm-head; compiled as the runtime compiles a partition
 * part, from placementToSegments' slice) and layer 0 as one fused segment (the calibration: what the same
 * groups cost when ORT fuses them and passes no intermediate outputs).
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { compileSegment, describeValue, GraphBuilder, modelOpGroups, segmentSpec, type CompilableModel, type GraphTarget, type GroupKind, type OpGroup, type SegmentSpec } from '../../graph'
import { defaultPrefillChunkTokens, MATMUL_GROUPS, placementToSegments, PLACEMENT_VERSION, rowCuts, rowShareOf, type MatmulGroup, type Placement, type RowSlice } from '../../plan'
import type { ModelConfig } from '../../model'
import { resolveContext } from '../context'
import { MAX_TIMED_TOKENS, type TimedDim, type TimedInput } from '../hetero/session-timing'

/** Most run lengths sampled per graph. */
export const MAX_PROFILE_TOKEN_COUNTS = 16

/** A graph of part a of a row partition of one matmul group (cut at PROFILE_PART_RATIO). */
export type PartTarget = `part:${MatmulGroup}`

/** The target naming the partition-part graph of `group`. */
export function partTarget(group: MatmulGroup): PartTarget {
  return `part:${group}`
}

/** The matmul group a partition-part target measures, or null when `target` names no part. */
export function partGroupOf(target: ProfileTarget): MatmulGroup | null {
  return MATMUL_GROUPS.find((g) => partTarget(g) === target) ?? null
}

/**
 * What a graph measures: one op-group kind, the trivial graph that gives the run overhead, the first
 * layers fused into one segment (which calibrates the single-group times), or a partition part.
 */
export type ProfileTarget = GroupKind | 'overhead' | 'layer-stack' | PartTarget

/** A compiled graph to time at each of `tokens`. */
export interface ProfileGraph {
  readonly target: ProfileTarget
  readonly bytes: Uint8Array
  readonly inputs: readonly TimedInput[]
  /** run lengths to sample, ascending */
  readonly tokens: readonly number[]
}

/**
 * Layers in the fused calibration segment. One: a second would add the residual fused across the layer
 * boundary (a few µs) and double the calibration's cost, which on a software GPU is most of the profile.
 */
export const STACK_LAYERS = 1

/**
 * The row share of the one partition part measured per matmul group: a half, the middle of the solver's
 * ratio grid, so no grid share is more than half the range from a measured point (0, the part, or 1).
 */
export const PROFILE_PART_RATIO = 0.5

/** A partition part the profiler measures: part a of `group` cut at PROFILE_PART_RATIO, holding `share` of its rows. */
export interface ProfilePart {
  readonly group: MatmulGroup
  /** the share after rounding the cut (rowShareOf) */
  readonly share: number
}

/** The partition parts measured for this model: every matmul group whose weights can be cut at PROFILE_PART_RATIO. */
export function profileParts(config: ModelConfig): ProfilePart[] {
  return MATMUL_GROUPS.flatMap((group) => {
    const cuts = rowCuts(group, PROFILE_PART_RATIO, config)
    return typeof cuts === 'string' ? [] : [{ group, share: rowShareOf(cuts) }]
  })
}

/** Part a's spec and slice of a row partition of `group` (layer 0, or the final lm-head), as the runtime builds them. */
function partSegment(config: ModelConfig, group: MatmulGroup): { spec: SegmentSpec; slice: RowSlice } {
  const partition = { layer: group === 'lm-head' ? 'final' : 0, group, by: 'rows', devices: ['a', 'b'], ratio: PROFILE_PART_RATIO } as const
  const phase = { device: 'a', groups: [], partitions: [partition] }
  const placement: Placement = { version: PLACEMENT_VERSION, name: 'profile', prefillChunkTokens: 1, phases: { prefill: phase, decode: phase } }
  for (const seg of placementToSegments(placement, 'decode', config)) {
    if (seg.kind === 'partition' && seg.parts[0].slice.by === 'rows') return { spec: seg.spec, slice: seg.parts[0].slice }
  }
  throw new Error(`no row partition of ${group} in the profiling placement`)
}

/** What is sampled: run lengths, the cached length, the RoPE table (as production compiles it). */
export interface SampleLengths {
  readonly tokens: readonly number[]
  readonly pastTokens: number
  readonly ropeTableLength: number
  /** layers in the calibration segment (STACK_LAYERS, or fewer for a smaller model) */
  readonly stackLayers: number
}

/**
 * The run lengths (the wanted ones plus the prefill chunk) and cached length that fit the model's RoPE
 * table: past + tokens ≤ the table, at least one cached position, at least one run length.
 */
export function sampleLengths(model: CompilableModel, wanted: readonly number[], chunkTokens: number | undefined, pastTokens: number): SampleLengths {
  const { ropeTableLength } = resolveContext(model.config, model.config.contextLength)
  const past = Math.max(1, Math.min(pastTokens, Math.floor(ropeTableLength / 2)))
  const chunk = chunkTokens ?? defaultPrefillChunkTokens(model.config)
  const maxRun = Math.min(ropeTableLength - past, MAX_TIMED_TOKENS)
  const fits = [...wanted, chunk].filter((t) => Number.isInteger(t) && t >= 1 && t <= maxRun)
  const tokens = [...new Set(fits)].sort((a, b) => a - b).slice(-MAX_PROFILE_TOKEN_COUNTS)
  return { tokens: tokens.length > 0 ? tokens : [1], pastTokens: past, ropeTableLength, stackLayers: Math.min(STACK_LAYERS, model.config.nLayers) }
}

/** The trivial graph: y = x + 1 over [1, dim], so its run time is the fixed cost of a run. */
function overheadGraph(dim: number): Uint8Array {
  const b = new GraphBuilder('tandem-profile-overhead')
  const x = b.input('x', 'float32', [1, dim])
  b.node('Add', [x, b.f32('one', [], Float32Array.of(1))], { name: 'add', outputs: ['y'] })
  b.output('y', 'float32', [1, dim])
  return b.toBytes('tandem-profile')
}

/** A graph input's dim as the worker fills it: fixed, the run's tokens, or the cached length. */
function profileDim(input: string, d: number | string): TimedDim {
  if (typeof d === 'number' || d === 'seq' || d === 'capacity') return d
  throw new Error(`graph input ${input} has a dim ${JSON.stringify(d)} the profiler cannot fill`)
}

/** Compile-time choices besides the target. */
export interface CompileChoices {
  readonly int8Activations?: boolean
  readonly signal?: AbortSignal
}

/**
 * Compiles the graphs for one target, yielding to the event loop between them (this runs on the caller's
 * thread); `step` is called after each op group's and each partition part's. The overhead graph goes first and last: a fresh
 * thread's first runs are slow (allocator and thread pool warming up), and the lesser median is the
 * steady-state overhead.
 */
export async function compileProfileGraphs(model: CompilableModel, lengths: SampleLengths, target: GraphTarget, choices: CompileChoices, step: (measured: ProfileTarget) => void): Promise<ProfileGraph[]> {
  const { config } = model
  const all = modelOpGroups(config)
  const compiled = (measured: ProfileTarget, spec: SegmentSpec, tokens: readonly number[], slice?: RowSlice): ProfileGraph => {
    const bytes = compileSegment(model, spec, { ropeTableLength: lengths.ropeTableLength, int8Activations: choices.int8Activations, target }, slice)
    const inputs = spec.inputs.map((name): TimedInput => {
      const { elem, dims } = describeValue(config, name)
      if (elem !== 'float32' && elem !== 'int64') throw new Error(`graph input ${name} has element type ${elem}, which the profiler cannot fill`)
      return { name, elem, dims: dims.map((d) => profileDim(name, d)) }
    })
    return { target: measured, bytes, inputs, tokens }
  }
  const segment = (measured: ProfileTarget, groups: readonly OpGroup[], tokens: readonly number[]): ProfileGraph => compiled(measured, segmentSpec(config, groups, all), tokens)
  const overhead: ProfileGraph = { target: 'overhead', bytes: overheadGraph(config.dim), inputs: [{ name: 'x', elem: 'float32', dims: [1, config.dim] }], tokens: [1] }
  const graphs: ProfileGraph[] = [overhead]
  for (const group of all.filter((g) => g.layer === 0 || g.layer === null)) {
    choices.signal?.throwIfAborted()
    // lm-head only ever sees the last row, so its time does not depend on the run length
    graphs.push(segment(group.kind, [group], group.kind === 'lm-head' ? [1] : lengths.tokens))
    step(group.kind)
    await yieldToEventLoop()
  }
  for (const { group } of profileParts(config)) {
    choices.signal?.throwIfAborted()
    const { spec, slice } = partSegment(config, group)
    graphs.push(compiled(partTarget(group), spec, group === 'lm-head' ? [1] : lengths.tokens, slice))
    step(partTarget(group))
    await yieldToEventLoop()
  }
  choices.signal?.throwIfAborted()
  graphs.push(segment('layer-stack', all.filter((g) => g.layer !== null && g.layer < lengths.stackLayers), lengths.tokens))
  graphs.push(overhead)
  return graphs
}
