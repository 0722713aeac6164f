/**
 * @file A loaded model ready to talk: tokenizer and config on the calling thread, weights and the ONNX
 * session in a worker (ModelWorkerClient), and a GenerationLoop over both. This is what the CLI and services use.
 */
import type { DeviceInfo } from '../devices'
import { loadModel, renderChatTemplate, type LoadedModel } from '../model'
import type { Placement } from '../plan'
import { GenerationLoop, type Generation, type GenerateRequest } from './generation/generation-loop'
import { openModelWorker, type ModelWorkerClient } from './model-worker/model-worker-client'

export interface OpenModelOptions {
  /** tokenizer for llama2.c checkpoints (default: tok*.bin beside the model) */
  readonly tokenizerPath?: string
  readonly cacheDir?: string
  readonly threads?: number
  /** cap the context below the model's own (saves KV-cache memory) */
  readonly maxContext?: number
  /** where each op group runs (see ModelWorkerOptions.placement); default one CPU session */
  readonly placement?: Placement
  /** this machine's devices; required with a placement */
  readonly devices?: readonly DeviceInfo[]
  /** tokens per prefill chunk without a placement (a placement brings its own); default the planner's */
  readonly prefillChunkTokens?: number
}

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant'
  readonly content: string
}

export class TextModel {
  private readonly generator: GenerationLoop

  private constructor(
    /** config, tokenizer and metadata; `weights` is null here (they live in the worker) */
    readonly info: LoadedModel,
    readonly worker: ModelWorkerClient
  ) {
    this.generator = new GenerationLoop(worker, info.tokenizer, info.config.vocabSize)
  }

  /**
   * Opens a model — a path (file or HF folder) whose header is parsed here, or a header already parsed —
   * compiles or reuses its graph and starts its worker, which reads only the weights.
   */
  static async open(model: string | LoadedModel, options: OpenModelOptions = {}): Promise<TextModel> {
    const info = typeof model === 'string' ? await loadModel(model, { tokenizerPath: options.tokenizerPath, weights: false }) : model
    const worker = await openModelWorker(info, options)
    return new TextModel(info, worker)
  }

  get contextLength(): number {
    return this.worker.contextLength
  }

  /** Encodes a plain prompt the way the model's own reference does (llama2.c: BOS + run.c's rules). */
  encodePrompt(text: string): number[] {
    const tok = this.info.tokenizer
    return this.info.promptStyle === 'llama2c' ? tok.encode(text, { addBos: true }) : tok.encode(text)
  }

  /** Applies the model's chat template and encodes the result; throws when the model has none. */
  encodeChat(messages: readonly ChatMessage[]): number[] {
    const template = this.info.chatTemplate
    if (!template) {
      throw new Error(`${this.info.path} has no chat template; use a plain prompt (without --chat) or a chat model`)
    }
    const tok = this.info.tokenizer
    const bosToken = tok.bosId === null ? '' : tok.tokenText(tok.bosId)
    const eosToken = tok.eosId === null ? '' : tok.tokenText(tok.eosId)
    const text = renderChatTemplate(template, messages, { bosToken, eosToken, addGenerationPrompt: true })
    const startsWithBos = bosToken !== '' && text.startsWith(bosToken)
    return tok.encode(text, { addBos: !startsWithBos, parseSpecial: true })
  }

  /** Streams a continuation of `request.promptIds`; the model's stop ids always apply. */
  generate(request: GenerateRequest): Generation {
    const stopTokenIds = [...this.info.stopTokenIds, ...this.info.tokenizer.extraStopIds, ...(request.stopTokenIds ?? [])]
    return this.generator.generate({ ...request, stopTokenIds })
  }

  async dispose(): Promise<void> {
    await this.worker.dispose()
  }
}
