/**
 * @file Compiles a loaded model (or one segment of its op groups, or one part of a row-partitioned matmul
 * group) into ONNX bytes for the CPU EP or, with `target: 'webgpu'`, for the WebGPU EP without CPU fallback.
 * One graph serves prefill chunks and decode steps: dynamic S (tokens in this run) and C (cache
 * capacity). Whole-model I/O — inputs: hidden [1, S, dim] f32 (embeddings looked up by the runtime),
 * positions [S] i64 (P..P+S−1 for P cached positions), past_k_L [nKv, hd, C] and past_v_L [nKv, C, hd]
 * f32 (the runtime's cache buffers, read only); outputs: logits [1, vocab] of the last position and
 * new_kv [2·L, S, nKv·hd] — every layer's new K (after RoPE) and V rows in one tensor (each graph output
 * costs a fixed overhead in onnxruntime-node). The cache never leaves as an output.
 */
import type { ModelConfig, ModelWeights } from '../model'
import { groupSize } from './emit-attention'
import { EmitContext, resolveGraphOptions, type GraphOptions } from './emit-context'
import type { ExternalWeights } from './external-data'
import { GraphBuilder } from './onnx-builder'
import { describeValue, emitGroup, VALUE, wholeModelSegment, type SegmentSpec } from './op-groups'
import { checkGroupPart, type GroupPart } from './partition'

/** Bump when emitted graphs change for the same model, so cached graphs are recompiled. */
export const GRAPH_COMPILER_VERSION = 'tandem-graph-6'

/** The graph output carrying every new K/V row (see `kvOutputValues` for its order). */
export const KV_OUTPUT = 'new_kv'

/** A model with weights, as the compiler needs it. */
export interface CompilableModel {
  readonly config: ModelConfig
  readonly weights: ModelWeights
}

/** Where a compile sends what is not the graph itself. */
export interface CompileSink {
  /** where large weights go (external-data.ts); without it they stay inside the graph (at most ~2 GiB) */
  readonly external?: ExternalWeights
  /** called after each op group is emitted, with the groups done and the total */
  readonly onGroup?: (done: number, total: number) => void
}

/** Checks the config's shape assumptions the emitters rely on; throws a clear error otherwise. */
export function checkCompilable(config: ModelConfig, options: GraphOptions): void {
  groupSize(config)
  if (config.ropeDim % 2 !== 0 || config.ropeDim > config.headDim || config.ropeDim <= 0) {
    throw new Error(`ropeDim ${config.ropeDim} must be even and in (0, headDim ${config.headDim}]`)
  }
  if (!Number.isInteger(options.ropeTableLength) || options.ropeTableLength < 1 || options.ropeTableLength > config.contextLength) {
    throw new RangeError(`ropeTableLength ${options.ropeTableLength} must be in [1, contextLength ${config.contextLength}]`)
  }
}

/**
 * The logical new_k_L / new_v_L values packed, in this order, along axis 0 of the segment's KV_OUTPUT
 * [count, S, nKv·hd] (for the whole model: k0, v0, k1, v1, ...). Empty when the segment has no layer.
 */
export function kvOutputValues(spec: SegmentSpec): string[] {
  const layers = spec.outputs.flatMap((name) => {
    const m = /^new_[kv]_(\d+)$/.exec(name)
    return m ? [Number(m[1])] : []
  })
  return [...new Set(layers)].sort((a, b) => a - b).flatMap((l) => [VALUE.newK(l), VALUE.newV(l)].filter((name) => spec.outputs.includes(name)))
}

/**
 * Emits the groups of `spec` into one graph and returns the serialized model. With `part`, `spec` is one
 * matmul group and the graph is that group's share of a row partition (see partition.ts): the unsplit
 * group's inputs at full width; each of `part.outputs` under its own name, [1, S, end − start] (logits
 * [1, end − start]), never packed into KV_OUTPUT (the parts' widths differ). With `sink.external`, the large
 * weights go to that file (external-data.ts) and the graph has no size limit; without, they stay inside.
 */
export function compileSegment(model: CompilableModel, spec: SegmentSpec, options: GraphOptions, part?: GroupPart | null, sink: CompileSink = {}): Uint8Array {
  const resolved = resolveGraphOptions(options)
  checkCompilable(model.config, resolved)
  if (part) checkPartSpec(model.config, spec, part)
  const b = new GraphBuilder('tandem', sink.external ?? null)
  const ctx = new EmitContext(b, model.config, model.weights, resolved)
  const seq = resolved.staticRows ?? 'seq'
  for (const name of spec.inputs) {
    const { elem, dims } = describeValue(model.config, name, seq)
    ctx.set(name, b.input(name, elem, dims))
  }
  spec.groups.forEach((group, i) => {
    emitGroup(ctx, group, part ?? null)
    sink.onGroup?.(i + 1, spec.groups.length)
  })
  const output = (name: string, width: number | null): void => {
    const { elem, dims } = describeValue(model.config, name, seq)
    const value = ctx.get(name)
    // a graph output must carry its contract name; alias internal names through Identity
    if (value !== name) b.node('Identity', [value], { name: `${name}/out`, outputs: [name] })
    b.output(name, elem, width === null ? dims : [...dims.slice(0, -1), width])
  }
  if (part) {
    for (const o of part.outputs) output(o.value, o.end - o.start)
    return b.toBytes(GRAPH_COMPILER_VERSION)
  }
  const kv = kvOutputValues(spec)
  for (const name of spec.outputs) if (!kv.includes(name)) output(name, null)
  if (kv.length > 0) {
    b.node('Concat', kv.map((name) => ctx.get(name)), { name: 'new_kv/pack', outputs: [KV_OUTPUT], attrs: { axis: { int: 0 } } })
    b.output(KV_OUTPUT, 'float32', [kv.length, seq, model.config.nKvHeads * model.config.headDim])
  }
  return b.toBytes(GRAPH_COMPILER_VERSION)
}

/** A part's spec is exactly one matmul group whose outputs are the part's outputs. */
function checkPartSpec(config: ModelConfig, spec: SegmentSpec, part: GroupPart): void {
  if (spec.groups.length !== 1) throw new Error(`a partition part compiles exactly one matmul group; the spec has ${spec.groups.length}`)
  checkGroupPart(config, spec.groups[0], part)
  const produced = part.outputs.map((o) => o.value).sort()
  if (produced.join() !== [...spec.outputs].sort().join()) {
    throw new Error(`the part produces ${produced.join(', ')} but the spec's outputs are ${spec.outputs.join(', ')}`)
  }
}

/** The whole model as one graph (the single-device path). */
export function compileModel(model: CompilableModel, options: GraphOptions, sink: CompileSink = {}): Uint8Array {
  return compileSegment(model, wholeModelSegment(model.config), options, null, sink)
}
