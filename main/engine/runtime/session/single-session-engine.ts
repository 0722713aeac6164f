/**
 * @file One compiled model on one session with its runtime-owned KV cache: embeddings in JS, the graph
 * for everything else, the cache buffers passed in as inputs (free) and only the new K/V rows and the
 * last logits coming back (outputs cost per byte) into buffers the engine owns, the rows written into the
 * cache after each run. Feeds and outputs are the same tensor objects from run to run until a chunk's length
 * or the cache's capacity changes, so a gate that keeps them bound (the C API's I/O binding) hands nothing
 * over per token. Runs on whatever thread owns it (the model worker in production, the test thread in graph tests).
 */
import type { KvFormat } from '../kv-snapshot'
import { float32Tensor, int64Tensor, type OrtSession, type OrtTensor } from '../../devices'
import { KV_OUTPUT, VALUE, type CompilableModel } from '../../graph'
import { checkForward, chunkLengths, stopIfCancelled, type ForwardEngine } from '../forward'
import { KvCache } from './kv-cache'
import type { UsageBoard } from '../usage'
import { dequantizeRows, type ModelConfig } from '../../model'

/** Engine settings. */
export interface SingleSessionOptions {
  /** positions the cache holds; forward past this throws ContextOverflowError */
  readonly contextLength: number
  /** tokens per graph run during prefill (the placement's prefillChunkTokens); bounds the attention scores buffer [nHeads, chunk, T] */
  readonly prefillChunkTokens: number
  /** where time spent in session.run is recorded (the worker's usage board, this device's slot) */
  readonly usage?: { readonly board: UsageBoard; readonly slot: number }
}

/** A model ready to run: forward tokens at a position, get the last position's logits. */
export class SingleSessionEngine implements ForwardEngine {
  readonly config: ModelConfig
  readonly contextLength: number
  readonly prefillChunkTokens: number
  private readonly cache: KvCache
  // reused input buffers, sized for one chunk: [chunk, dim] and [chunk]
  private readonly hidden: Float32Array
  private readonly positions: BigInt64Array
  // the run's feeds, reused across runs (decode builds no tensors per token): hidden/positions are
  // rebuilt when the run length changes, the cache tensors when the cache's buffers grow
  private readonly feeds: Record<string, OrtTensor> = {}
  private feedCount = -1
  private feedKeys: Float32Array | null = null
  // the run's outputs for the current run length: the new K/V rows and the logits, written in place
  private outputs: { count: number; kv: Float32Array; logits: Float32Array; tensors: Record<string, OrtTensor> } | null = null
  private disposed = false
  private readonly usage: SingleSessionOptions['usage']

  constructor(
    private readonly model: CompilableModel,
    private readonly session: OrtSession,
    options: SingleSessionOptions
  ) {
    this.config = model.config
    const { contextLength } = options
    if (!Number.isInteger(contextLength) || contextLength < 1 || contextLength > model.config.contextLength) {
      throw new RangeError(`contextLength ${contextLength} must be in [1, ${model.config.contextLength}]`)
    }
    this.contextLength = contextLength
    const chunk = options.prefillChunkTokens
    if (!Number.isInteger(chunk) || chunk < 1) throw new RangeError(`prefillChunkTokens must be a positive integer, got ${chunk}`)
    this.prefillChunkTokens = Math.min(chunk, contextLength)
    const c = model.config
    this.cache = new KvCache({ nLayers: c.nLayers, nKvHeads: c.nKvHeads, headDim: c.headDim, maxLen: contextLength })
    this.hidden = new Float32Array(this.prefillChunkTokens * c.dim)
    this.positions = new BigInt64Array(this.prefillChunkTokens)
    this.usage = options.usage
  }

  /** Positions currently cached (the next position to run). */
  get cacheLength(): number {
    return this.cache.length
  }

  /** See ForwardEngine.forward: one graph run per prefill chunk, in order. */
  async forward(tokens: readonly number[], pos: number, cancelled?: () => boolean): Promise<Float32Array> {
    if (this.disposed) throw new Error('single-session engine disposed')
    checkForward(tokens, pos, { vocabSize: this.config.vocabSize, cacheLength: this.cache.length, contextLength: this.contextLength })
    this.cache.truncate(pos)
    // one growth for the whole call rather than one per chunk
    this.cache.reserve(pos + tokens.length)
    let logits: Float32Array | null = null
    let start = 0
    for (const count of chunkLengths(tokens.length, this.prefillChunkTokens)) {
      if (start > 0) stopIfCancelled(cancelled)
      logits = await this.runChunk(tokens, start, count)
      start += count
    }
    if (!logits) throw new Error('unreachable: no chunk ran')
    return logits
  }

  /** Rewinds the cache to `pos` positions. */
  truncate(pos: number): void {
    this.cache.truncate(pos)
  }

  /** See ForwardEngine.readKv. */
  async readKv(start: number, count: number, format: KvFormat): Promise<Uint8Array> {
    return this.cache.readSnapshot(start, count, format)
  }

  /** See ForwardEngine.writeKv. */
  async writeKv(start: number, count: number, format: KvFormat, bytes: Uint8Array, reserve = 0): Promise<void> {
    if (!Number.isInteger(count) || count < 1 || start + count > this.contextLength) throw new RangeError(`cannot write ${count} KV positions at ${start} (context ${this.contextLength})`)
    this.cache.truncate(start)
    this.cache.reserve(Math.min(this.contextLength, Math.max(start + count, reserve)))
    this.cache.writeSnapshot(bytes, count, format)
  }

  /** Releases the session. */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    await this.session.release()
  }

  /** session.runInto, its time recorded on the usage board (counted live while it runs). */
  private async timedRun(feeds: Readonly<Record<string, OrtTensor>>, outputs: Readonly<Record<string, OrtTensor>>): Promise<void> {
    const usage = this.usage
    if (!usage) return this.session.runInto(feeds, outputs)
    return usage.board.timed(usage.slot, () => this.session.runInto(feeds, outputs))
  }

  /** The output buffers for a run of `count` tokens (made again only when the length changes). */
  private outputsFor(count: number): NonNullable<SingleSessionEngine['outputs']> {
    if (this.outputs?.count === count) return this.outputs
    const { nLayers, nKvHeads, headDim, vocabSize } = this.config
    // [2·nLayers, count, nKv·hd]: layer l's keys at 2l, values at 2l + 1
    const kv = new Float32Array(2 * nLayers * count * nKvHeads * headDim)
    const logits = new Float32Array(vocabSize)
    this.outputs = { count, kv, logits, tensors: { [KV_OUTPUT]: float32Tensor(kv, [2 * nLayers, count, nKvHeads * headDim]), [VALUE.logits]: float32Tensor(logits, [1, vocabSize]) } }
    return this.outputs
  }

  private async runChunk(tokens: readonly number[], start: number, count: number): Promise<Float32Array> {
    const { dim, nLayers, nKvHeads, headDim } = this.config
    const past = this.cache.length
    const capacity = this.cache.capacity
    const emb = this.model.weights.tokenEmbedding
    for (let i = 0; i < count; i++) {
      dequantizeRows(emb, tokens[start + i], 1, this.hidden, i * dim)
      this.positions[i] = BigInt(past + i)
    }
    const feeds = this.feeds
    if (count !== this.feedCount) {
      feeds[VALUE.hidden] = float32Tensor(this.hidden.subarray(0, count * dim), [1, count, dim])
      feeds[VALUE.positions] = int64Tensor(this.positions.subarray(0, count), [count])
      this.feedCount = count
    }
    // the cache swaps in new buffers only when it grows; layer 0's key buffer identifies the current set
    if (this.cache.past(0).keys !== this.feedKeys) {
      for (let l = 0; l < nLayers; l++) {
        const p = this.cache.past(l)
        feeds[VALUE.pastK(l)] = float32Tensor(p.keys, [nKvHeads, headDim, capacity])
        feeds[VALUE.pastV(l)] = float32Tensor(p.values, [nKvHeads, capacity, headDim])
      }
      this.feedKeys = this.cache.past(0).keys
    }
    const out = this.outputsFor(count)
    await this.timedRun(feeds, out.tensors)
    const kv = out.kv
    const block = count * nKvHeads * headDim
    for (let l = 0; l < nLayers; l++) {
      this.cache.write(l, kv.subarray(2 * l * block, (2 * l + 1) * block), kv.subarray((2 * l + 1) * block, (2 * l + 2) * block), count)
    }
    this.cache.commit(count)
    // a copy the caller owns (the worker transfers it); the engine's buffer is written again next run
    return out.logits.slice()
  }
}
