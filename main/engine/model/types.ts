/**
 * @file The one in-memory shape every loader (GGUF, llama2.c, Hugging Face) produces and every later
 * stage (reference forward, graph compiler, runtime) consumes.
 */
import type { Tokenizer } from './tokenizer/types'
import type { WeightLayout } from './weight-layout'

/** Architectures the engine can run; the registry maps file metadata onto these. */
export type Architecture = 'llama' | 'qwen2'

/**
 * How RoPE pairs dimensions inside a head.
 * 'adjacent': (2i, 2i+1), as llama2.c and GGUF llama (the converter permutes Q/K rows).
 * 'rotate-half': (i, i + ropeDim/2), as Hugging Face and GGUF qwen2 (ggml NEOX mode).
 */
export type RopePairing = 'adjacent' | 'rotate-half'

/** Llama-3.1 style frequency scaling (HF rope_scaling.rope_type = "llama3"). */
export interface Llama3RopeScaling {
  readonly type: 'llama3'
  readonly factor: number
  readonly lowFreqFactor: number
  readonly highFreqFactor: number
  readonly originalContextLength: number
}

/** Hyperparameters: the blueprint. Pure data, safe to JSON-serialise. */
export interface ModelConfig {
  readonly architecture: Architecture
  /** residual width */
  readonly dim: number
  /** FFN inner width */
  readonly hiddenDim: number
  readonly nLayers: number
  readonly nHeads: number
  readonly nKvHeads: number
  readonly headDim: number
  readonly vocabSize: number
  /** maximum positions the model supports (tokens) */
  readonly contextLength: number
  readonly normEps: number
  readonly ropeTheta: number
  readonly ropePairing: RopePairing
  /** rotated dimensions per head (usually headDim) */
  readonly ropeDim: number
  readonly ropeScaling: Llama3RopeScaling | null
  /** per-frequency divisors (GGUF `rope_freqs.weight`, ropeDim/2 values), or null */
  readonly ropeFreqFactors: readonly number[] | null
  /** lm head shares the token embedding */
  readonly tiedEmbeddings: boolean
  /** Q, K and V projections have biases (Qwen2) */
  readonly qkvBias: boolean
}

export type DenseDType = 'f32' | 'f16' | 'bf16'
export type BlockDType = 'q8_0' | 'q4_0' | 'q4_k' | 'q6_k'

/**
 * Tensor bytes, kept in the file's own encoding (views into the file buffer, no copies).
 * - dense: little-endian row-major elements; `bytes` may be unaligned (safetensors), so read through
 *   the helpers in `tensor.ts`, never with a bare Float32Array view.
 * - ggml: rows of ggml blocks exactly as GGUF stores them (each row = cols / blockElems blocks).
 * - int8-groups: llama2.c version-2 Q8_0: all int8 values row-major, one f32 scale per group.
 */
export type TensorData =
  | { readonly kind: 'dense'; readonly dtype: DenseDType; readonly bytes: Uint8Array }
  | { readonly kind: 'ggml'; readonly dtype: BlockDType; readonly bytes: Uint8Array }
  | {
      readonly kind: 'int8-groups'
      readonly values: Int8Array
      readonly scales: Float32Array
      readonly groupSize: number
    }

/** A named tensor. Shape is outer-first: a matrix is [rows, cols] = [outFeatures, inFeatures]. */
export interface Tensor {
  readonly name: string
  readonly shape: readonly number[]
  readonly data: TensorData
  /**
   * For tensors still in their file (file-weights.ts): rows [start, start + count) of a 2-D tensor as a tensor
   * of their own, read without reading the rest (an embedding lookup reads one row of a 0.5 GB table).
   */
  readonly rows?: (start: number, count: number) => Tensor
}

/** Per-layer weights; matrices are [out, in] so y = W·x. */
export interface LayerWeights {
  /** [dim] */
  readonly attnNorm: Tensor
  /** [nHeads*headDim, dim] */
  readonly wq: Tensor
  /** [nKvHeads*headDim, dim] */
  readonly wk: Tensor
  /** [nKvHeads*headDim, dim] */
  readonly wv: Tensor
  /** [dim, nHeads*headDim] */
  readonly wo: Tensor
  /** biases, present iff config.qkvBias: [nHeads*headDim], [kvDim], [kvDim] */
  readonly bq: Tensor | null
  readonly bk: Tensor | null
  readonly bv: Tensor | null
  /** [dim] */
  readonly ffnNorm: Tensor
  /** [hiddenDim, dim] (w1) */
  readonly wGate: Tensor
  /** [hiddenDim, dim] (w3) */
  readonly wUp: Tensor
  /** [dim, hiddenDim] (w2) */
  readonly wDown: Tensor
}

export interface ModelWeights {
  /** [vocab, dim] */
  readonly tokenEmbedding: Tensor
  readonly layers: readonly LayerWeights[]
  /** [dim] */
  readonly finalNorm: Tensor
  /** [vocab, dim]; the same object as tokenEmbedding when config.tiedEmbeddings */
  readonly output: Tensor
}

export type ModelFormat = 'gguf' | 'llama2c' | 'hf'

/** Everything the engine knows about one model. */
export interface LoadedModel {
  /** what was opened: the model file, or the folder for Hugging Face models */
  readonly path: string
  readonly format: ModelFormat
  readonly config: ModelConfig
  /** null when loaded with `{ weights: false }` */
  readonly weights: ModelWeights | null
  /** where the weights lie in the model's files (readWeights reads them without parsing the header again) */
  readonly layout: WeightLayout
  readonly tokenizer: Tokenizer
  /** Jinja chat template source, when the model ships one */
  readonly chatTemplate: string | null
  /** human summary, e.g. "Q4_K_M (q4_k, q6_k, f32)" or "F32" */
  readonly quantization: string
  /** every distinct tensor encoding present, e.g. ['f32', 'q4_k', 'q6_k'] */
  readonly tensorTypes: readonly string[]
  /** token ids that end generation (eos, eot, im_end, and BOS for llama2.c models) */
  readonly stopTokenIds: readonly number[]
  /** how prompts are turned into ids the way the model's reference does */
  readonly promptStyle: PromptStyle
}

/**
 * llama2c: BOS, then the text with run.c's leading-space rule (the tokenizer adds the dummy prefix).
 * tokenizer: whatever the tokenizer's own add-BOS / normaliser settings do.
 */
export type PromptStyle = 'llama2c' | 'tokenizer'

export interface LoadOptions {
  /** tokenizer file for llama2.c checkpoints (default: tok*.bin beside the model) */
  readonly tokenizerPath?: string
  /** false: parse and validate headers, config and tokenizer only (weights = null) */
  readonly weights?: boolean
}
