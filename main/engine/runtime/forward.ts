/**
 * @file What the two engines share: the forward contract (tokens at a position in, the last position's
 * logits out), the checks of its arguments, and the one place a forward is cut into prefill chunks. The
 * single-session engine runs the chunks one after another; the device-workers engine pipelines them, but
 * both cut the same way from the same chunk length (the placement's prefillChunkTokens).
 */
import type { KvFormat } from './kv-snapshot'
import { ContextOverflowError, ForwardCancelledError } from './errors'

/** A model engine running on the calling thread (the model worker drives one). */
export interface ForwardEngine {
  /** positions the engine can hold */
  readonly contextLength: number
  /** tokens per prefill chunk: one graph run (or one pipelined chunk) covers at most this many */
  readonly prefillChunkTokens: number
  /** positions cached now (the next position to run) */
  readonly cacheLength: number
  /**
   * Runs `tokens` at positions pos.. and returns the logits [vocab] of the last one (a fresh array the
   * caller owns). `pos` ≤ cacheLength; a smaller `pos` rewinds the cache first (regenerate). Prompts
   * longer than one chunk run in chunks; `cancelled` is asked before every chunk after the first, and a
   * true answer ends the forward with ForwardCancelledError (the chunks already run stay cached).
   */
  forward(tokens: readonly number[], pos: number, cancelled?: () => boolean): Promise<Float32Array>
  /** Rewinds the cache to `pos` positions. */
  truncate(pos: number): void
  /** Cached positions [start, start + count) as snapshot bytes in `format` (kv-snapshot.ts). */
  readKv(start: number, count: number, format: KvFormat): Promise<Uint8Array>
  /**
   * Puts `count` positions of snapshot bytes at positions start.. (the cache is rewound to `start` first, which must be
   * ≤ cacheLength), making room for `reserve` positions at once when larger (a restore of many blocks grows the cache
   * once, not per block).
   */
  writeKv(start: number, count: number, format: KvFormat, bytes: Uint8Array, reserve?: number): Promise<void>
  dispose(): Promise<void>
}

/** The lengths of the chunks `count` tokens run in: full chunks of `chunkTokens`, then the rest. */
export function chunkLengths(count: number, chunkTokens: number): number[] {
  if (!Number.isInteger(chunkTokens) || chunkTokens < 1) throw new RangeError(`the prefill chunk must be a positive integer, got ${chunkTokens}`)
  const lengths: number[] = []
  for (let start = 0; start < count; start += chunkTokens) lengths.push(Math.min(chunkTokens, count - start))
  return lengths
}

/** Throws ForwardCancelledError when `cancelled` says so (the engines call it between chunks). */
export function stopIfCancelled(cancelled: (() => boolean) | undefined): void {
  if (cancelled?.() === true) throw new ForwardCancelledError('the forward was cancelled between prefill chunks')
}

/** Checks a forward's arguments against the vocabulary, the cached length and the context; throws naming the problem. */
export function checkForward(tokens: readonly number[], pos: number, at: { readonly vocabSize: number; readonly cacheLength: number; readonly contextLength: number }): void {
  if (tokens.length === 0) throw new RangeError('forward needs at least one token')
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]
    if (!Number.isInteger(t) || t < 0 || t >= at.vocabSize) throw new RangeError(`token ${i} is ${t}, outside the vocabulary [0, ${at.vocabSize})`)
  }
  if (!Number.isInteger(pos) || pos < 0) throw new RangeError(`position must be a non-negative integer, got ${pos}`)
  if (pos > at.cacheLength) throw new RangeError(`position ${pos} is past the cached length ${at.cacheLength}`)
  if (pos + tokens.length > at.contextLength) {
    throw new ContextOverflowError(`context overflow: ${pos} cached + ${tokens.length} new tokens > context length ${at.contextLength}`)
  }
}
