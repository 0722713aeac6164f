/**
 * @file The parent's side of a child process: fork bench/child.ts under tsx, send requests, await the
 * validated replies. A child that crashes or exits rejects whatever is pending; `close` asks it to exit
 * and kills it (by its own pid) if it does not within a grace period.
 */
import { fileURLToPath } from 'node:url'
import { awaitReady, ChildRpc, forkTsChild, reap } from './child-rpc'
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

/** Distributive Omit, so each request variant keeps its own fields. */
type RequestBody = PeerRequest extends infer R ? (R extends PeerRequest ? Omit<R, 'id'> : never) : never

/** A peer (one engine, one model, one thread count) in its own process. */
export class PeerChild {
  private constructor(
    private readonly rpc: ChildRpc<PeerMessage, RequestBody>,
    readonly init: PeerInit,
    readonly loadMs: number,
    readonly details: Details
  ) {}

  /** the child's process id (for its CPU counters) */
  get pid(): number | undefined {
    return this.rpc.pid
  }

  /** "tandem/2t" */
  get label(): string {
    return labelOf(this.init)
  }

  /** Forks the child and waits until its model is loaded. */
  static async start(init: PeerInit): Promise<PeerChild> {
    const child = forkTsChild(CHILD_SCRIPT, init)
    const ready = await awaitReady(child, labelOf(init), parsePeerMessage)
    return new PeerChild(new ChildRpc(child, labelOf(init), parsePeerMessage), init, ready.loadMs, ready.details)
  }

  /** Timed call; resolves to the child's milliseconds and greedy tokens. */
  async run(body: Exclude<RequestBody, { op: 'exit' } | { op: 'memory' }>): Promise<{ ms: number; tokens: readonly number[] }> {
    const m = await this.rpc.request(body)
    if (m.type !== 'result') throw new Error(`${this.label}: expected a result, got ${m.type}`)
    return { ms: m.ms, tokens: m.tokens }
  }

  /** The child's resident memory now and at its peak, in bytes. */
  async memory(): Promise<{ rssBytes: number; peakRssBytes: number }> {
    const m = await this.rpc.request({ op: 'memory' })
    if (m.type !== 'memory') throw new Error(`${this.label}: expected a memory report, got ${m.type}`)
    return { rssBytes: m.rssBytes, peakRssBytes: m.peakRssBytes }
  }

  /** Asks the child to dispose and exit; resolves to its peak RSS in bytes (null if it had failed). */
  async close(): Promise<number | null> {
    let rss: number | null = null
    if (!this.rpc.failure) {
      const m = await this.rpc.request({ op: 'exit' }).catch(() => null)
      if (m && m.type === 'bye') rss = m.maxRssBytes
    }
    await this.rpc.reap()
    return rss
  }
}

/** Runs the machine-limits probe in a child of its own (its 512 MiB buffer never touches the parent). */
export async function runLimitsChild(init: LimitsInit): Promise<{ samples: readonly LimitSamples[]; ortVersion: string }> {
  const child = forkTsChild(CHILD_SCRIPT, init)
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
    await reap(child)
  }
}

/** "tandem/2t" */
function labelOf(init: PeerInit): string {
  return `${init.peer}/${init.threads}t`
}
