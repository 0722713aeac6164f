/**
 * @file Hand-off latency between the coordinator and a device worker: one empty command through the
 * shared control block (Atomics.notify → worker wakes from Atomics.wait → Atomics.notify → coordinator's
 * Atomics.waitAsync resolves) against a postMessage round trip to an echoing worker, the baseline the
 * control block replaces. Reports the median µs per hop over several repetitions.
 * Standalone: `node --import tsx bench/handoff.ts` prints the JSON; bench/run.ts calls `measureHandoff`.
 */
import { once } from 'node:events'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { DeviceHost, UsageBoard, ValueArena } from '../main/engine/runtime'

/** What measureHandoff reports. */
export interface HandoffMeasurement {
  /** median µs per command round trip through the SharedArrayBuffer control block */
  readonly sabAtomicsUsPerHop: number
  /** median µs per postMessage round trip (message out, echo back) */
  readonly postMessageUsPerHop: number
  /** round trips per repetition */
  readonly hops: number
  readonly reps: number
}

/** Options for measureHandoff. */
export interface HandoffOptions {
  /** round trips per repetition (default 2000) */
  readonly hops?: number
  /** repetitions, alternating the two methods (default 5) */
  readonly reps?: number
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** An echo worker: replies to every message with the same message (plain CommonJS eval, no TypeScript). */
function startEcho(): Worker {
  return new Worker("const { parentPort } = require('node:worker_threads'); parentPort.on('message', (m) => parentPort.postMessage(m))", { eval: true })
}

/** Measures both hand-offs, alternating them `reps` times; the device worker is a real one (empty command). */
export async function measureHandoff(options: HandoffOptions = {}): Promise<HandoffMeasurement> {
  const hops = options.hops ?? 2000
  const reps = options.reps ?? 5
  const arena = ValueArena.create([{ name: 'hidden', width: 1, rows: 1 }])
  const board = new UsageBoard()
  const host = DeviceHost.start({ deviceId: 'cpu', ep: 'cpu', arena: arena.init, usage: board.buffer, usageSlot: 0, kv: { nKvHeads: 1, headDim: 1, maxLen: 1 } })
  const echo = startEcho()
  try {
    let pending: (() => void) | null = null
    echo.on('message', () => pending?.())
    const roundTrip = (i: number): Promise<void> =>
      new Promise<void>((done) => {
        pending = done
        echo.postMessage(i)
      })
    // warm up both paths (worker start-up, JIT)
    for (let i = 0; i < 200; i++) {
      await host.ping()
      await roundTrip(i)
    }
    const sab: number[] = []
    const post: number[] = []
    for (let r = 0; r < reps; r++) {
      let t = performance.now()
      for (let i = 0; i < hops; i++) await host.ping()
      sab.push(((performance.now() - t) * 1000) / hops)
      t = performance.now()
      for (let i = 0; i < hops; i++) await roundTrip(i)
      post.push(((performance.now() - t) * 1000) / hops)
    }
    return { sabAtomicsUsPerHop: median(sab), postMessageUsPerHop: median(post), hops, reps }
  } finally {
    const exited = once(echo, 'exit')
    await echo.terminate()
    await exited
    await host.dispose()
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  measureHandoff().then(
    (m) => console.log(JSON.stringify(m, null, 2)),
    (err: unknown) => {
      console.error(err)
      process.exitCode = 1
    }
  )
}
