/**
 * @file The parent's side of a placement child: fork bench/placement-child.ts under tsx, send requests,
 * await the validated replies. A child that crashes or exits rejects whatever is pending; `close` asks it
 * to exit and kills it (by its own pid) if it does not within a grace period.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { parsePlacementMessage, type DeviceBusy, type PlacementChildInit, type PlacementMessage, type PlacementRequest } from './placement-protocol'

const CHILD_SCRIPT = fileURLToPath(new URL('./placement-child.ts', import.meta.url))
/** How long a child may take to exit after 'bye' (or after failing) before it is killed. */
const EXIT_GRACE_MS = 10_000

/** Distributive Omit, so each request variant keeps its own fields. */
type RequestBody = PlacementRequest extends infer R ? (R extends PlacementRequest ? Omit<R, 'id'> : never) : never

/** A timed call's outcome, as the child measured it. */
export interface PlacementCallResult {
  readonly ms: number
  readonly tokens: readonly number[]
  readonly busy: readonly DeviceBusy[]
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => child.once('exit', () => resolve()))
}

/** One placement's runner in a process of its own. */
export class PlacementChild {
  private nextId = 1
  private readonly pending = new Map<number, { resolve(m: PlacementMessage): void; reject(e: Error): void }>()
  private failure: Error | null = null

  private constructor(
    private readonly child: ChildProcess,
    readonly label: string,
    readonly loadMs: number,
    /** devices the runner uses, in its usage order */
    readonly deviceIds: readonly string[],
    readonly setup: string
  ) {
    child.on('message', (raw: unknown) => this.onMessage(raw))
    child.on('exit', (code, signal) => this.fail(new Error(`${label} exited (code ${code}, signal ${signal})`)))
  }

  /** the child's process id (for its CPU counters) */
  get pid(): number | undefined {
    return this.child.pid
  }

  /** Forks the child and waits until its runner is open. */
  static async start(label: string, init: PlacementChildInit): Promise<PlacementChild> {
    // stdout is dropped (the child prints nothing of use); stderr passes through for crashes
    const child = fork(CHILD_SCRIPT, [JSON.stringify(init)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
    const ready = await new Promise<{ loadMs: number; deviceIds: readonly string[]; setup: string }>((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`${label} exited before it was ready (code ${code})`))
      child.once('exit', onExit)
      child.once('message', (raw: unknown) => {
        child.off('exit', onExit)
        try {
          const m = parsePlacementMessage(raw)
          if (m.type === 'ready') resolve(m)
          else reject(new Error(`${label} failed to open: ${m.type === 'error' ? m.message : m.type}`))
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)))
        }
      })
    }).catch(async (e: unknown) => {
      const timer = setTimeout(() => child.kill(), EXIT_GRACE_MS)
      await exited(child)
      clearTimeout(timer)
      throw e
    })
    return new PlacementChild(child, label, ready.loadMs, ready.deviceIds, ready.setup)
  }

  private fail(err: Error): void {
    if (!this.failure) this.failure = err
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
  }

  private onMessage(raw: unknown): void {
    let m: PlacementMessage
    try {
      m = parsePlacementMessage(raw)
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

  private request(body: RequestBody): Promise<PlacementMessage> {
    if (this.failure) return Promise.reject(this.failure)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.send({ ...body, id })
    })
  }

  /** A timed prefill or decode. */
  async run(body: Exclude<RequestBody, { op: 'exit' }>): Promise<PlacementCallResult> {
    const m = await this.request(body)
    if (m.type !== 'result') throw new Error(`${this.label}: expected a result, got ${m.type}`)
    return { ms: m.ms, tokens: m.tokens, busy: m.busy }
  }

  /** Asks the child to dispose its runner and exit; kills it after a grace period. */
  async close(): Promise<void> {
    if (!this.failure) await this.request({ op: 'exit' }).catch(() => null)
    const timer = setTimeout(() => this.child.kill(), EXIT_GRACE_MS)
    await exited(this.child)
    clearTimeout(timer)
  }
}
