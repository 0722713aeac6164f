/**
 * @file The generation loop: the prompt in one forward (the engine cuts it into prefill chunks), then
 * forward → sample → detokenize → stop rules, streamed
 * as an async iterator of {tokenId, text}. The KV cache is reused across calls when a new prompt
 * starts with tokens already in the cache (the common case in a chat).
 */
import { createDetokenizer, type Tokenizer } from '../../model'
import { ContextOverflowError, ForwardCancelledError, InvalidLogitsError } from '../errors'
import { createSampler, DEFAULT_SAMPLING, type SamplingOptions } from './sampler'
import { StopStringFilter } from './stop-text'
import { usageDelta, type DeviceUsage } from '../usage'

/** What the loop needs from a model (the worker-backed ModelWorkerClient satisfies it). */
export interface ForwardModel {
  readonly contextLength: number
  /** runs `tokens` at positions pos.. and returns the logits of the last one; `signal` stops a long prompt between prefill chunks (ForwardCancelledError) */
  forward(tokens: readonly number[], pos: number, signal?: AbortSignal): Promise<Float32Array>
  /** forgets cached positions ≥ pos */
  truncate(pos: number): Promise<void>
  /** cumulative busy time per device (a model without devices, like the reference, may omit it) */
  usage?(): DeviceUsage
}

export interface GenerateRequest {
  readonly promptIds: readonly number[]
  readonly maxTokens: number
  readonly sampling?: Partial<SamplingOptions>
  /** ids that end generation (the model's own stop ids are added by TextModel) */
  readonly stopTokenIds?: readonly number[]
  readonly stopStrings?: readonly string[]
  readonly signal?: AbortSignal
  /**
   * Awaited before each token after the first, before the abort check: a caller can slow the loop down
   * (`tandem serve --token-delay-ms`, for end-to-end tests). It should resolve promptly once `signal` aborts.
   */
  readonly pace?: () => Promise<void>
  /**
   * Before the prompt runs: may put KV rows of the prompt's positions `live`.. into the model's cache (a snapshot) and
   * resolves to how many prompt positions the cache now holds (≥ `live`, < the prompt's length: the last prompt
   * token is always computed). `live` is what the cache already held from the last generation. A failed restore
   * rejects nothing: resolve to `live` and the positions are computed.
   */
  readonly restore?: (prompt: readonly number[], live: number) => Promise<number>
}

export interface GenerationEvent {
  readonly tokenId: number
  /** text completed by this token ('' while a multi-byte character or a possible stop string is pending) */
  readonly text: string
}

export type StopReason = 'eos' | 'stop-string' | 'max-tokens' | 'aborted' | 'context-full'

export interface GenerationStats {
  readonly promptTokens: number
  /** prompt tokens actually computed (the rest came from the KV cache) */
  readonly prefillTokens: number
  /** prompt tokens not computed: taken from the live cache or a snapshot (promptTokens − prefillTokens) */
  readonly reusedTokens: number
  /** of those, the ones a snapshot brought back (request.restore) */
  readonly restoredTokens: number
  readonly generatedTokens: number
  readonly ttftMs: number
  readonly prefillTokensPerSec: number
  readonly decodeTokensPerSec: number
  /** each device in use, its busy time and its runs (graph runs, or tasks on a device worker) during this generation; empty when the model reports no usage */
  readonly devices: readonly { readonly id: string; readonly busyMs: number; readonly runs: number }[]
}

export interface GenerationResult {
  readonly text: string
  readonly tokens: readonly number[]
  readonly promptTokens: readonly number[]
  readonly stopReason: StopReason
  readonly stats: GenerationStats
}

/** One streamed generation; iterate it once, then read `result`. */
export interface Generation extends AsyncIterable<GenerationEvent> {
  readonly result: Promise<GenerationResult>
}

/** Drives one model; generations run one at a time in call order. */
export class GenerationLoop {
  /** token ids whose K/V rows are in the model's cache, in position order */
  private cached: number[] = []
  private queue: Promise<unknown> = Promise.resolve()
  /** generations queued whose turn has not come: a task between generations stops early for them (withCache) */
  private waiting = 0

  constructor(
    private readonly model: ForwardModel,
    private readonly tokenizer: Tokenizer,
    private readonly vocabSize: number
  ) {}

  generate(request: GenerateRequest): Generation {
    validateRequest(request, this.model.contextLength)
    const events: GenerationEvent[] = []
    let wake: (() => void) | null = null
    let done = false
    const notify = (): void => {
      wake?.()
      wake = null
    }
    this.waiting++
    const run = this.queue.then(() => {
      this.waiting--
      return this.run(request, (e) => {
        events.push(e)
        notify()
      })
    })
    this.queue = run.catch(() => undefined)
    const result = run.finally(() => {
      done = true
      notify()
    })
    // The caller may only read `result`; keep an unobserved rejection from crashing the process.
    result.catch(() => undefined)
    return {
      result,
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (events.length > 0) {
            const e = events.shift()
            if (e) yield e
          }
          if (done) break
          await new Promise<void>((resolve) => (wake = resolve))
        }
        await result // surfaces an error from the loop to the iterating caller
      }
    }
  }

  /**
   * Runs `task` with the token ids whose KV rows the cache holds, after the generations already queued and before
   * any later one (a snapshot reads the cache while nothing can change it). `interrupted()` turns true once a
   * generation is waiting behind the task: a long task (saving a snapshot) should then stop at its next step, so the
   * user's next message never waits for it.
   */
  withCache<T>(task: (cached: readonly number[], interrupted: () => boolean) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => task([...this.cached], () => this.waiting > 0))
    this.queue = run.catch(() => undefined)
    return run
  }

  private async run(req: GenerateRequest, emit: (e: GenerationEvent) => void): Promise<GenerationResult> {
    const start = performance.now()
    const usageBefore = this.model.usage?.()
    const prompt = req.promptIds
    const sampler = createSampler(this.vocabSize, { ...DEFAULT_SAMPLING, ...req.sampling })
    const stopIds = new Set(req.stopTokenIds ?? [])
    const stopText = new StopStringFilter(req.stopStrings ?? [])

    // Reuse the cached prefix, but always compute at least the last prompt token to get its logits.
    let reuse = 0
    while (reuse < prompt.length - 1 && reuse < this.cached.length && this.cached[reuse] === prompt[reuse]) reuse++
    if (reuse < this.cached.length) await this.model.truncate(reuse)
    this.cached.length = reuse
    const live = reuse
    if (req.restore !== undefined && reuse < prompt.length - 1) {
      const restored = await req.restore(prompt, reuse)
      if (!Number.isInteger(restored) || restored < reuse || restored >= prompt.length) throw new RangeError(`restore returned ${restored} positions for a prompt of ${prompt.length} with ${reuse} cached`)
      this.cached.push(...prompt.slice(reuse, restored))
      reuse = restored
    }

    let logits: Float32Array | null = null
    try {
      const rest = prompt.slice(reuse)
      logits = await this.model.forward(rest, reuse, req.signal)
      this.cached.push(...rest)
      checkLogits(logits, prompt.length - 1)
    } catch (err) {
      // stopped between prefill chunks: the engine keeps what it ran, the next call rewinds to what we know
      if (!(err instanceof ForwardCancelledError)) throw err
    }
    const prefillEnd = performance.now()
    const prefillTokens = prompt.length - reuse

    const history: number[] = [...prompt]
    const tokens: number[] = []
    const detok = createDetokenizer(this.tokenizer, prompt.slice(Math.max(0, prompt.length - 8)))
    let text = ''
    let stopReason: StopReason = 'max-tokens'
    let firstTokenAt = 0
    while (logits) {
      if (req.pace !== undefined && tokens.length > 0) await req.pace()
      if (req.signal?.aborted) {
        stopReason = 'aborted'
        break
      }
      const id = sampler.sample(logits, history)
      if (tokens.length === 0) firstTokenAt = performance.now()
      if (stopIds.has(id)) {
        stopReason = 'eos'
        break
      }
      tokens.push(id)
      history.push(id)
      const piece = stopText.push(detok.push(id))
      text += piece
      emit({ tokenId: id, text: piece })
      if (stopText.hit) {
        stopReason = 'stop-string'
        break
      }
      if (tokens.length >= req.maxTokens) break
      const pos = this.cached.length
      if (pos >= this.model.contextLength) {
        stopReason = 'context-full'
        break
      }
      logits = await this.model.forward([id], pos)
      this.cached.push(id)
      checkLogits(logits, pos)
    }
    if (!logits) stopReason = 'aborted'
    const tail = stopText.hit ? '' : stopText.push(detok.flush()) + stopText.flush()
    if (tail) {
      text += tail
      emit({ tokenId: tokens[tokens.length - 1] ?? -1, text: tail })
    }
    const end = performance.now()
    const usageAfter = this.model.usage?.()
    const devices = usageBefore && usageAfter ? usageDelta(usageBefore, usageAfter) : []
    const prefillMs = prefillEnd - start
    const decodeMs = end - (firstTokenAt || end)
    return {
      text,
      tokens,
      promptTokens: [...prompt],
      stopReason,
      stats: {
        promptTokens: prompt.length,
        prefillTokens,
        reusedTokens: reuse,
        restoredTokens: reuse - live,
        generatedTokens: tokens.length,
        ttftMs: (firstTokenAt || end) - start,
        prefillTokensPerSec: prefillMs > 0 ? (prefillTokens * 1000) / prefillMs : 0,
        // the first token comes from prefill; decode speed counts the forwards after it
        decodeTokensPerSec: tokens.length > 1 && decodeMs > 0 ? ((tokens.length - 1) * 1000) / decodeMs : 0,
        devices
      }
    }
  }
}

/**
 * Throws InvalidLogitsError when the logits at `pos` hold NaN or ±infinity. Without this, greedy argmax
 * over NaN returns id 0 every time (an empty reply that looks complete) and the sampler's weights become
 * NaN, so its draw falls off the end of the candidates. One pass over the vocabulary per token: small next
 * to the forward that produced it.
 */
function checkLogits(logits: Float32Array, pos: number): void {
  for (let i = 0; i < logits.length; i++) {
    if (!Number.isFinite(logits[i])) {
      throw new InvalidLogitsError(
        `the model produced invalid numbers (${logits[i]} in its output for token ${i} at position ${pos}); ` +
          'its weights are probably damaged or overflow: try another file of this model'
      )
    }
  }
}

function validateRequest(r: GenerateRequest, contextLength: number): void {
  if (r.promptIds.length === 0) throw new RangeError('the prompt is empty: it needs at least one token (e.g. BOS)')
  if (r.promptIds.length >= contextLength) {
    throw new ContextOverflowError(
      `the prompt is ${r.promptIds.length} tokens but the context holds ${contextLength}; shorten it or start a new conversation`
    )
  }
  if (!Number.isInteger(r.maxTokens) || r.maxTokens < 1) throw new RangeError('maxTokens must be an integer ≥ 1')
}
