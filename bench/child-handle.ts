/**
 * @file The parent's side of a child process: fork bench/child.ts under tsx, send requests, await the
 * validated replies. A child that crashes or exits rejects whatever is pending; `close` asks it to exit
 * and kills it (by its own pid) if it does not within a grace period.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import {
  parseLimitsMessage,
  parsePeerMessage,
  type Details,
  type LimitSamples,
  type LimitsInit,
  type PeerInit,
  type PeerMessage,
  type PeerRequest
} from './protocol'

const CHILD_SCRIPT = fileURLToPath(new URL('./child.ts', import.meta.url))
/** How long a child may take to exit after replying 'bye' before it is killed. */
const EXIT_GRACE_MS = 10_000

/** Distributive Omit, so each request variant keeps its own fields. */
type RequestBody = PeerRequest extends infer R ? (R extends PeerRequest ? Omit<R, 'id'> : never) : never

function startChild(init: PeerInit | LimitsInit): ChildProcess {
  // stdout is the parent's (the child prints nothing on success); stderr passes through for crashes
  return fork(CHILD_SCRIPT, [JSON.stringify(init)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/** A peer (one engine, one model, one thread count) in its own process. */
export class PeerChild {
  private nextId = 1
  private readonly pending = new Map<number, { resolve(m: PeerMessage): void; reject(e: Error): void }>()
  private failure: Error | null = null

  private constructor(
    private readonly child: ChildProcess,
    readonly init: PeerInit,
    readonly loadMs: number,
    readonly details: Details
  ) {
    child.on('message', (raw: unknown) => this.onMessage(raw))
    child.on('exit', (code, signal) => this.fail(new Error(`${this.label} exited (code ${code}, signal ${signal})`)))
  }

  /** the child's process id (for its CPU counters) */
  get pid(): number | undefined {
    return this.child.pid
  }

  /** "tandem/2t" */
  get label(): string {
    return `${this.init.peer}/${this.init.threads}t`
  }

  /** Forks the child and waits until its model is loaded. */
  static async start(init: PeerInit): Promise<PeerChild> {
    const child = startChild(init)
    const ready = await new Promise<{ loadMs: number; details: Details }>((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`${init.peer}/${init.threads}t exited before it was ready (code ${code})`))
      child.once('exit', onExit)
      child.once('message', (raw: unknown) => {
        child.off('exit', onExit)
        try {
          const m = parsePeerMessage(raw)
          if (m.type === 'ready') resolve({ loadMs: m.loadMs, details: m.details })
          else reject(new Error(`${init.peer}/${init.threads}t failed to load: ${m.type === 'error' ? m.message : m.type}`))
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)))
        }
      })
    }).catch(async (e: unknown) => {
      if (child.exitCode === null) child.kill()
      await exited(child)
      throw e
    })
    return new PeerChild(child, init, ready.loadMs, ready.details)
  }

  private fail(err: Error): void {
    if (!this.failure) this.failure = err
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
  }

  private onMessage(raw: unknown): void {
    let m: PeerMessage
    try {
      m = parsePeerMessage(raw)
    } catch (e) {
      this.fail(new Error(`${this.label} sent a bad message: ${e instanceof Error ? e.message : String(e)}`))
      return
    }
    if (m.type === 'ready') return
    if (m.id === null) {
      this.fail(new Error(`${this.label}: ${m.type === 'error' ? m.message : 'unexpected message'}`))
      return
    }
    const p = this.pending.get(m.id)
    if (!p) return
    this.pending.delete(m.id)
    if (m.type === 'error') p.reject(new Error(`${this.label}: ${m.message}`))
    else p.resolve(m)
  }

  private request(body: RequestBody): Promise<PeerMessage> {
    if (this.failure) return Promise.reject(this.failure)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.send({ ...body, id })
    })
  }

  /** Timed call; resolves to the child's milliseconds and greedy tokens. */
  async run(body: Exclude<RequestBody, { op: 'exit' }>): Promise<{ ms: number; tokens: readonly number[] }> {
    const m = await this.request(body)
    if (m.type !== 'result') throw new Error(`${this.label}: expected a result, got ${m.type}`)
    return { ms: m.ms, tokens: m.tokens }
  }

  /** Asks the child to dispose and exit; resolves to its peak RSS in bytes (null if it had failed). */
  async close(): Promise<number | null> {
    let rss: number | null = null
    if (!this.failure) {
      const m = await this.request({ op: 'exit' }).catch(() => null)
      if (m && m.type === 'bye') rss = m.maxRssBytes
    }
    const timer = setTimeout(() => this.child.kill(), EXIT_GRACE_MS)
    await exited(this.child)
    clearTimeout(timer)
    return rss
  }
}

/** Runs the machine-limits probe in a child of its own (its 512 MiB buffer never touches the parent). */
export async function runLimitsChild(init: LimitsInit): Promise<{ samples: readonly LimitSamples[]; ortVersion: string }> {
  const child = startChild(init)
  try {
    return await new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`limits child exited (code ${code})`)))
      child.once('message', (raw: unknown) => {
        try {
          const m = parseLimitsMessage(raw)
          if (m.type === 'error') reject(new Error(`limits child: ${m.message}`))
          else resolve({ samples: m.samples, ortVersion: m.ortVersion })
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)))
        }
      })
    })
  } finally {
    const timer = setTimeout(() => child.kill(), EXIT_GRACE_MS)
    await exited(child)
    clearTimeout(timer)
  }
}
