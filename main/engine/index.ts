/**
 * @file The engine's public surface. Code outside main/engine imports only from here.
 */
export {
  loadModel,
  ModelFormatError,
  type LoadedModel,
  type ModelConfig,
  type LoadOptions,
  type Tokenizer
} from './model'
export { TextModel, type ChatMessage, type OpenModelOptions } from './runtime/text-model'
export { ContextOverflowError } from './runtime'
export {
  type Generation,
  type GenerationEvent,
  type GenerationResult,
  type GenerationStats,
  type GenerateRequest,
  type StopReason
} from './runtime/generate'
export { DEFAULT_SAMPLING, validateSampling, type SamplingOptions } from './runtime/sampler'
