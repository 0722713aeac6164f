/**
 * @file The parent's side of a placement child: fork bench/placement-child.ts under tsx, send requests,
 * await the validated replies. A child that crashes or exits rejects whatever is pending; `close` asks it
 * to exit and kills it (by its own pid) if it does not within a grace period.
 */
import { fileURLToPath } from 'node:url'
import { awaitReady, ChildRpc, forkTsChild } from './child-rpc'
import { parsePlacementMessage, type DeviceBusy, type PlacementChildInit, type PlacementMessage, type PlacementRequest } from './placement-protocol'

const CHILD_SCRIPT = fileURLToPath(new URL('./placement-child.ts', import.meta.url))

/** Distributive Omit, so each request variant keeps its own fields. */
type RequestBody = PlacementRequest extends infer R ? (R extends PlacementRequest ? Omit<R, 'id'> : never) : never

/** A timed call's outcome, as the child measured it. */
export interface PlacementCallResult {
  readonly ms: number
  readonly tokens: readonly number[]
  readonly busy: readonly DeviceBusy[]
}

/** One placement's runner in a process of its own. */
export class PlacementChild {
  private constructor(
    private readonly rpc: ChildRpc<PlacementMessage, RequestBody>,
    readonly label: string,
    readonly loadMs: number,
    /** devices the runner uses, in its usage order */
    readonly deviceIds: readonly string[],
    readonly setup: string
  ) {}

  /** the child's process id (for its CPU counters) */
  get pid(): number | undefined {
    return this.rpc.pid
  }

  /** Forks the child and waits until its runner is open. */
  static async start(label: string, init: PlacementChildInit): Promise<PlacementChild> {
    const child = forkTsChild(CHILD_SCRIPT, init)
    const ready = await awaitReady(child, label, parsePlacementMessage)
    return new PlacementChild(new ChildRpc(child, label, parsePlacementMessage), label, ready.loadMs, ready.deviceIds, ready.setup)
  }

  /** A timed prefill or decode. */
  async run(body: Exclude<RequestBody, { op: 'exit' }>): Promise<PlacementCallResult> {
    const m = await this.rpc.request(body)
    if (m.type !== 'result') throw new Error(`${this.label}: expected a result, got ${m.type}`)
    return { ms: m.ms, tokens: m.tokens, busy: m.busy }
  }

  /** Asks the child to dispose its runner and exit; kills it after a grace period. */
  async close(): Promise<void> {
    if (!this.rpc.failure) await this.rpc.request({ op: 'exit' }).catch(() => null)
    await this.rpc.reap()
  }
}
