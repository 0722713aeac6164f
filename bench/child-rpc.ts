/**
 * @file Request/reply over a forked child's IPC channel, shared by the bench's peer and placement children:
 * the child sends one 'ready' (or an 'error' with id null) first, then answers each request with a
 * message carrying the request's id. A child that crashes or exits rejects whatever is pending; `close`
 * asks it to exit and kills it if it does not within a grace period.
 */
import { fork, type ChildProcess } from 'node:child_process'

/** How long a child may take to exit after its last reply (or after failing) before it is killed. */
export const EXIT_GRACE_MS = 10_000

/** The message variants every child protocol has; other variants carry the id of the request they answer. */
export type ChildMessage = { readonly type: 'ready' } | { readonly type: 'error'; readonly id: number | null; readonly message: string } | { readonly type: string; readonly id: number }

/** Forks `script` under tsx with `init` as its one argument; stdout dropped, stderr passed through for crashes. */
export function forkTsChild(script: string, init: unknown): ChildProcess {
  return fork(script, [JSON.stringify(init)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
}

/** Resolves once the child has exited (at once if it already has). */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/** Kills the child unless it exits by itself within EXIT_GRACE_MS; resolves once it is gone. */
export async function reap(child: ChildProcess): Promise<void> {
  const timer = setTimeout(() => child.kill(), EXIT_GRACE_MS)
  await exited(child)
  clearTimeout(timer)
}

/** Waits for the child's first message: its ready message, or a rejection naming what went wrong (the child is reaped then). */
export async function awaitReady<M extends ChildMessage, R extends M & { readonly type: 'ready' }>(
  child: ChildProcess,
  label: string,
  parse: (raw: unknown) => M
): Promise<R> {
  try {
    return await new Promise<R>((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`${label} exited before it was ready (code ${code})`))
      child.once('exit', onExit)
      child.once('message', (raw: unknown) => {
        child.off('exit', onExit)
        try {
          const m = parse(raw)
          if (isReady<M, R>(m)) resolve(m)
          else reject(new Error(`${label} failed to start: ${m.type === 'error' && 'message' in m ? String(m.message) : m.type}`))
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)))
        }
      })
    })
  } catch (e) {
    if (child.exitCode === null) child.kill()
    await reap(child)
    throw e
  }
}

function isReady<M extends ChildMessage, R extends M & { readonly type: 'ready' }>(m: M): m is R {
  return m.type === 'ready'
}

/** The request side of a child's channel: numbered requests, replies matched by id, failures fanned out. */
export class ChildRpc<M extends ChildMessage, Q extends object> {
  private nextId = 1
  private readonly pending = new Map<number, { resolve(m: M): void; reject(e: Error): void }>()
  private failureError: Error | null = null

  constructor(
    private readonly child: ChildProcess,
    readonly label: string,
    private readonly parse: (raw: unknown) => M
  ) {
    child.on('message', (raw: unknown) => this.onMessage(raw))
    child.on('exit', (code, signal) => this.fail(new Error(`${label} exited (code ${code}, signal ${signal})`)))
  }

  /** the first failure (crash, exit, bad message), or null while healthy */
  get failure(): Error | null {
    return this.failureError
  }

  /** the child's process id (for its CPU counters) */
  get pid(): number | undefined {
    return this.child.pid
  }

  /** Sends `body` with a fresh id; resolves to the reply (an 'error' reply rejects). */
  request(body: Q): Promise<M> {
    if (this.failureError) return Promise.reject(this.failureError)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.send({ ...body, id })
    })
  }

  /** Waits for the child to exit (after it was asked to), killing it after the grace period. */
  reap(): Promise<void> {
    return reap(this.child)
  }

  private fail(err: Error): void {
    if (!this.failureError) this.failureError = err
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
  }

  private onMessage(raw: unknown): void {
    let m: M
    try {
      m = this.parse(raw)
    } catch (e) {
      this.fail(new Error(`${this.label} sent a bad message: ${e instanceof Error ? e.message : String(e)}`))
      return
    }
    if (m.type === 'ready' || !('id' in m)) return
    if (m.id === null) {
      this.fail(new Error(`${this.label}: ${'message' in m ? String(m.message) : 'unexpected message'}`))
      return
    }
    const p = this.pending.get(m.id)
    if (!p) return
    this.pending.delete(m.id)
    if (m.type === 'error' && 'message' in m) p.reject(new Error(`${this.label}: ${String(m.message)}`))
    else p.resolve(m)
  }
}
