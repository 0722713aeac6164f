/**
 * @file A reply's finishing write (final content, status, error, stats) when the disk may be full. That
 * write can need new pages even when streaming did not (a finished reply enters the search index), so on a
 * full disk it fails and the row would stay 'streaming' until the next start's markInterrupted(). Instead the
 * write is kept and retried — before the next chat request writes anything, and every FINISH_RETRY_MS — so
 * the reply shows its real status as soon as space returns, with or without a restart.
 */
import { StoreNotFoundError, type MessagePatch, type MessageStore, type Message as StoredMessage } from '../store'
import { errorMessage, isDiskFull } from './errors'

/** How often finishing writes that found the disk full are retried while any is waiting. */
export const FINISH_RETRY_MS = 2000

/** Finishes replies, keeping the writes a full disk refused until they succeed. */
export class ReplyFinisher {
  /** message id → the finishing write the disk refused, oldest first */
  private readonly waiting = new Map<string, MessagePatch>()
  private timer: ReturnType<typeof setInterval> | null = null

  constructor(private readonly messages: Pick<MessageStore, 'update'>) {}

  /**
   * Writes `patch` to message `id` and returns the message; null when the disk is full, in which case the
   * write waits for retry(). Any other error throws (e.g. StoreNotFoundError: the conversation was purged).
   */
  finish(id: string, patch: MessagePatch): StoredMessage | null {
    this.waiting.delete(id)
    try {
      return this.messages.update(id, patch)
    } catch (err) {
      if (!isDiskFull(err)) throw err
      this.waiting.set(id, patch)
      // unref: a waiting write must not keep `tandem serve` or a test process alive
      this.timer ??= setInterval(() => this.retry(), FINISH_RETRY_MS).unref()
      return null
    }
  }

  /** Ids of the replies whose finishing write is waiting for space. */
  get waitingIds(): string[] {
    return [...this.waiting.keys()]
  }

  /** Retries the waiting writes in order; stops at the first that finds the disk still full. */
  retry(): void {
    for (const [id, patch] of this.waiting) {
      try {
        this.messages.update(id, patch)
      } catch (err) {
        if (isDiskFull(err)) break
        // gone (regenerated over, purged): nothing to finish; unwritable for another reason: said once, dropped
        if (!(err instanceof StoreNotFoundError)) process.stderr.write(`tandem: could not finish reply ${id}: ${errorMessage(err)}\n`)
      }
      this.waiting.delete(id)
    }
    if (this.waiting.size === 0) this.stopTimer()
  }

  /** A last retry, then no more timer (writes still refused are left to the next start's markInterrupted). */
  dispose(): void {
    this.retry()
    this.stopTimer()
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }
}
