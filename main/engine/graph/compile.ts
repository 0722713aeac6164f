/**
 * @file Compiles a loaded model (or one segment of its op groups) into ONNX bytes for the CPU EP.
 * One graph serves prefill chunks and decode steps: dynamic S (tokens in this run) and P (cached
 * positions). Whole-model I/O — inputs: hidden [S, dim] f32 (embeddings looked up by the runtime),
 * positions [S] i64 (P..P+S−1), past_k_L / past_v_L [P, nKv, hd] f32; outputs: logits [1, vocab] of the
 * last position, new_k_L / new_v_L [S, nKv, hd] (K after RoPE). The cache never leaves as an output.
 */
import type { ModelConfig, ModelWeights } from '../model'
import { groupSize } from './emit-attention'
import { EmitContext, type GraphOptions } from './emit-context'
import { GraphBuilder } from './onnx-builder'
import { describeValue, emitGroup, wholeModelSegment, type SegmentSpec } from './op-groups'

/** Bump when emitted graphs change for the same model, so cached graphs are recompiled. */
export const GRAPH_COMPILER_VERSION = 'tandem-graph-1'

/** A model with weights, as the compiler needs it. */
export interface CompilableModel {
  readonly config: ModelConfig
  readonly weights: ModelWeights
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

/** Emits the groups of `spec` into one graph and returns the serialized model. */
export function compileSegment(model: CompilableModel, spec: SegmentSpec, options: GraphOptions): Uint8Array {
  checkCompilable(model.config, options)
  const b = new GraphBuilder('tandem')
  const ctx = new EmitContext(b, model.config, model.weights, options)
  for (const name of spec.inputs) {
    const { elem, dims } = describeValue(model.config, name)
    ctx.set(name, b.input(name, elem, dims))
  }
  for (const group of spec.groups) emitGroup(ctx, group)
  for (const name of spec.outputs) {
    const { elem, dims } = describeValue(model.config, name)
    const value = ctx.get(name)
    // a graph output must carry its contract name; alias internal names through Identity
    if (value !== name) b.node('Identity', [value], { name: `${name}/out`, outputs: [name] })
    b.output(name, elem, dims)
  }
  return b.toBytes(GRAPH_COMPILER_VERSION)
}

/** The whole model as one graph (the single-device path). */
export function compileModel(model: CompilableModel, options: GraphOptions): Uint8Array {
  return compileSegment(model, wholeModelSegment(model.config), options)
}
