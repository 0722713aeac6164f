/**
 * @file How much context a model is opened with, and how far its compiled RoPE tables reach: one policy for
 * the model worker, both engines and the profiler.
 */
import type { ModelConfig } from '../model'

/**
 * Context a model is opened with when the caller sets no maxContext. The KV cache grows with the
 * conversation, but the context bounds how far it may grow (2 · nLayers · contextLength · kvDim floats;
 * 1 GiB for a Llama-3-8B shape at 4096), so a model's advertised 128K context is opt-in.
 */
export const DEFAULT_MAX_CONTEXT = 4096
/**
 * Positions the compiled RoPE tables cover (cos and sin, ropeDim/2 floats each per position; 32 MiB at
 * ropeDim 128). The table does not depend on maxContext, so changing it never forces a recompile.
 */
export const MAX_ROPE_TABLE_POSITIONS = 32768

/** The context length a model is opened with and the graph's RoPE table length for a model and an optional cap. */
export function resolveContext(config: ModelConfig, maxContext?: number): { contextLength: number; ropeTableLength: number } {
  const ropeTableLength = Math.min(config.contextLength, MAX_ROPE_TABLE_POSITIONS)
  return { contextLength: Math.min(ropeTableLength, maxContext ?? DEFAULT_MAX_CONTEXT), ropeTableLength }
}
