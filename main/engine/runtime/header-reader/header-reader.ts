/**
 * @file HeaderReader: model headers read by a worker thread (header-worker.ts), as promises. Listing models
 * opens every header and tokenizer in the models folders; parsing a large one takes seconds of CPU, which on
 * the main thread would stall every call and reply stream. The worker starts on the first read and again
 * after it dies; a read that takes longer than HEADER_READ_LIMIT_MS (a file on a hung network share) ends
 * the worker and fails, so the listing goes on with the model marked unreadable.
 */
import type { Worker } from 'node:worker_threads'
import { PendingRequests } from '../../../common/pending-requests'
import { startWorkerThread, workerEntryUrl } from '../worker-thread'
import { readResponse, type HeaderRequest, type ModelFacts } from './protocol'

/** Longest a header read may take: far above any real header (the largest parse in seconds), so only a stuck read hits it. */
export const HEADER_READ_LIMIT_MS = 60_000

/** A header the loader could not read: its message (a fact about the file). */
export class HeaderReadError extends Error {
  override readonly name = 'HeaderReadError'
}

/** A read that failed for the reader's sake, not the file's: the worker died, hit the time limit, or was closed. */
export class HeaderWorkerError extends Error {
  override readonly name = 'HeaderWorkerError'
}

/** Reads model headers off the main thread, one at a time, in request order. */
export class HeaderReader {
  private worker: Worker | null = null
  private readonly pending = new PendingRequests<ModelFacts>()
  private disposed = false

  constructor(private readonly limitMs = HEADER_READ_LIMIT_MS) {}

  /** The header facts of the model at `path`; rejects with HeaderReadError carrying the loader's message, or HeaderWorkerError. */
  read(path: string): Promise<ModelFacts> {
    if (this.disposed) return Promise.reject(new HeaderWorkerError('the header reader is closed'))
    const worker = this.worker ?? this.start()
    // referenced while a read is pending (a script awaiting it must not exit first), not while idle
    worker.ref()
    const timer = setTimeout(() => this.fail(`reading the header of ${path} took longer than ${this.limitMs / 1000} s`), this.limitMs).unref()
    const { id, answer } = this.pending.add(() => clearTimeout(timer))
    const request: HeaderRequest = { id, path }
    worker.postMessage(request)
    return answer
  }

  /** Fails what is pending and ends the worker. Idempotent. */
  async dispose(): Promise<void> {
    this.disposed = true
    const worker = this.worker
    this.fail('the header reader is closed')
    await worker?.terminate()
  }

  private start(): Worker {
    const worker = startWorkerThread(workerEntryUrl(import.meta.url, 'header-worker'), null)
    worker.on('message', (message: unknown) => {
      let response
      try {
        response = readResponse(message)
      } catch (err) {
        return this.fail(`the header worker sent a bad message: ${err instanceof Error ? err.message : String(err)}`)
      }
      if ('error' in response) this.pending.reject(response.id, new HeaderReadError(response.error))
      else this.pending.resolve(response.id, response.facts)
      if (this.pending.size === 0) worker.unref()
    })
    worker.on('error', (err) => this.fail(`the header worker failed: ${err.message}`))
    worker.on('exit', () => {
      if (this.worker === worker) this.fail('the header worker stopped')
    })
    this.worker = worker
    return worker
  }

  /** Rejects every pending read with `message` and drops the worker (the next read starts a new one). */
  private fail(message: string): void {
    const worker = this.worker
    this.worker = null
    this.pending.rejectAll(new HeaderWorkerError(message))
    void worker?.terminate()
  }
}
