/**
 * @file SearchWorker: full-text search answered by a worker thread (search-worker.ts) on its own read-only
 * connection, as promises. The worker starts on the first search and again after a crash; dispose() closes
 * its connection and ends it.
 */
import type { Worker } from 'node:worker_threads'
import { PendingRequests } from '../common/pending-requests'
import { readResponse, type SearchRequest, type SearchWorkerData } from './search-protocol'
import type { SearchHit } from './types'

/**
 * How a worker thread is started: the engine's workerEntryUrl/startWorkerThread, passed in by the services
 * because the store may not import the engine. They also run a `.ts` entry from source (tests, tsx).
 */
export interface WorkerStarter {
  /** the URL of entry `stem` beside the module at `callerUrl` */
  entryUrl(callerUrl: string, stem: string): URL
  start(entry: URL, workerData: unknown): Worker
}

/** A search that could not be answered because the worker failed or was disposed. */
export class SearchWorkerError extends Error {
  override readonly name = 'SearchWorkerError'
}

/** How long dispose() lets the worker close its connection before ending it (a safety stop, not a timing). */
const CLOSE_GRACE_MS = 5000

/** Searches the database at `file` off the main thread. */
export class SearchWorker {
  private worker: Worker | null = null
  private readonly pending = new PendingRequests<SearchHit[]>()
  private disposed = false

  constructor(
    private readonly file: string,
    private readonly starter: WorkerStarter
  ) {}

  /** Like ConversationStore.search (same hits, same order), answered by the worker. */
  search(query: string, limit: number): Promise<SearchHit[]> {
    if (this.disposed) return Promise.reject(new SearchWorkerError('search is closed'))
    const worker = this.worker ?? this.start()
    const { id, answer } = this.pending.add()
    const request: SearchRequest = { type: 'search', id, query, limit }
    worker.postMessage(request)
    return answer
  }

  /** Fails what is pending, closes the worker's connection and ends the worker. Idempotent. */
  async dispose(): Promise<void> {
    this.disposed = true
    const worker = this.worker
    this.worker = null
    this.pending.rejectAll(new SearchWorkerError('search is closed'))
    if (worker === null) return
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    const close: SearchRequest = { type: 'close' }
    worker.postMessage(close)
    // The worker finishes the search it is on before it reads the close request; a huge one is cut short.
    const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS)
    await exited
    clearTimeout(timer)
  }

  private start(): Worker {
    const data: SearchWorkerData = { file: this.file }
    const worker = this.starter.start(this.starter.entryUrl(import.meta.url, 'search-worker'), data)
    worker.on('message', (raw: unknown) => {
      let response
      try {
        response = readResponse(raw)
      } catch (err) {
        this.crashed(worker, err instanceof Error ? err : new Error(String(err)))
        return
      }
      if ('error' in response) this.pending.reject(response.id, new SearchWorkerError(response.error))
      else this.pending.resolve(response.id, [...response.hits])
    })
    worker.on('error', (err) => this.crashed(worker, err))
    worker.on('exit', (code) => this.crashed(worker, new SearchWorkerError(`search worker exited (code ${code})`)))
    this.worker = worker
    return worker
  }

  /** The worker is gone or broken: fail its searches; the next search starts a new one. */
  private crashed(worker: Worker, err: Error): void {
    if (this.worker !== worker) return
    this.worker = null
    void worker.terminate()
    this.pending.rejectAll(err instanceof SearchWorkerError ? err : new SearchWorkerError(`search worker failed: ${err.message}`))
  }
}
