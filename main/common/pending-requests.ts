/**
 * @file Requests sent to a worker thread and waiting for their answers, by id: what every client of a worker
 * (search, model headers) keeps between postMessage and the reply, and fails at once when the worker dies.
 */

interface Waiting<T> {
  resolve(value: T): void
  reject(err: Error): void
  /** runs when the request is answered or failed (clears its time limit) */
  readonly settled?: () => void
}

/** The requests in flight; ids are never reused. */
export class PendingRequests<T> {
  private readonly waiting = new Map<number, Waiting<T>>()
  private nextId = 0

  /** Registers a request: the id to send with it, and the promise of its answer. */
  add(settled?: () => void): { readonly id: number; readonly answer: Promise<T> } {
    const id = this.nextId++
    const answer = new Promise<T>((resolve, reject) => this.waiting.set(id, { resolve, reject, settled }))
    return { id, answer }
  }

  /** Answers request `id` (an id not waiting, e.g. already failed, is ignored). */
  resolve(id: number, value: T): void {
    this.take(id)?.resolve(value)
  }

  /** Fails request `id` (ignored when not waiting). */
  reject(id: number, err: Error): void {
    this.take(id)?.reject(err)
  }

  /** Fails every waiting request with `err`. */
  rejectAll(err: Error): void {
    for (const id of [...this.waiting.keys()]) this.reject(id, err)
  }

  get size(): number {
    return this.waiting.size
  }

  private take(id: number): Waiting<T> | undefined {
    const w = this.waiting.get(id)
    if (w === undefined) return undefined
    this.waiting.delete(id)
    w.settled?.()
    return w
  }
}
