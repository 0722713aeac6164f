/**
 * @file The model folder's public surface: loading (GGUF, Hugging Face, llama2.c), the in-memory model
 * types, tokenizers and streaming detokenization, chat templates, RoPE frequencies, tensor decoding and
 * the reference forward pass. Other engine folders import only from here.
 */
export type {
  Architecture,
  BlockDType,
  DenseDType,
  LayerWeights,
  Llama3RopeScaling,
  LoadedModel,
  LoadOptions,
  ModelConfig,
  ModelFormat,
  ModelWeights,
  PromptStyle,
  RopePairing,
  Tensor,
  TensorData
} from './types'
export { ModelFormatError } from './errors'
export { loadModel } from './load'
export { readFileCapped, readTextCapped } from './file-read'
export { readWeights } from './file-weights'
export { readWeightLayout, layoutSources, type TensorEncoding, type TensorSource, type WeightLayout, type LayerSources } from './weight-layout'
export type { DecodeOptions, EncodeOptions, GgufVocab, Tokenizer } from './tokenizer/types'
export { createDetokenizer, type Detokenizer } from './tokenizer/incremental'
export { ChatTemplateError, renderChatTemplate, type ChatMessage, type ChatTemplateOptions } from './chat-template'
export { ropeInvFreq, ropePair } from './rope'
export { dequantizeRows, f16ToF32, sliceRows, tensorByteLength, tensorRowBytes, tensorRows, tensorToFloat32 } from './tensor'
export { createReferenceState, referenceForward, type Int8Rounding, type ReferenceState } from './reference'
export { readModelConfig, MAX_CONFIG_DIM } from './config-reader'
