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
export { dequantizeRows, f16ToF32, f16ToF32BitsTable, f32ToF16, sliceRows, tensorByteLength, tensorRowBytes, tensorRows, tensorToFloat32 } from './tensor'
export { createReferenceState, referenceForward, type Int8Rounding, type LinearOverride, type ReferenceOptions, type ReferenceState } from './reference'
export {
  calibrate,
  forEachPosition,
  layerMatmuls,
  shadowLayers,
  DEFAULT_SHADOW_PRUNED_PERCENT,
  w8a8Linears,
  w8a8Reference,
  CALIBRATION_VERSION,
  HOT_OUTLIER_SHARE,
  MAX_HOT_CHANNEL_SHARE,
  SCALE_CHANNEL_QUANTILE,
  type Calibration,
  type MatmulCalibration,
  type W8A8Setup
} from './calibrate'
export { activationSteps, dequantizePerChannel, makeShadow, quantizeActivation, quantizePerChannel, quantizeTensorPerChannel, w8a8Linear, w8a8OutputScales, INT8_MAX, INT8_MIN, type PerChannelInt8, type QuantizedActivation, type Shadow, type W8A8Linear, type W8A8Run } from './w8a8'
export { readModelConfig, MAX_CONFIG_DIM } from './config-reader'
