/**
 * @file A loaded model ready to talk: tokenizer and config on the calling thread, weights and the ONNX
 * session in a worker (ModelWorkerClient), and a GenerationLoop over both. This is what the CLI and services use.
 */
import { loadModel, renderChatTemplate, type LoadedModel } from '../model'
import { GenerationLoop, type Generation, type GenerateRequest } from './generation/generation-loop'
import { openModelWorker, type ModelWorkerClient, type ModelWorkerOptions } from './model-worker/model-worker-client'

/** How a model is opened: the model worker's options (threads, cache, context, placement, prefill chunk). */
export type OpenModelOptions = ModelWorkerOptions

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

  /** See GenerationLoop.withCache: runs `task` between generations with the token ids the KV cache holds. */
  withCache<T>(task: (cached: readonly number[], interrupted: () => boolean) => Promise<T>): Promise<T> {
    return this.generator.withCache(task)
  }

  async dispose(): Promise<void> {
    await this.worker.dispose()
  }
}
