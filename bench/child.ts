/**
 * @file Entry of the benchmark's child processes (forked by the parent with `--import tsx`; argv[2] is
 * the JSON init). A peer child loads one model in one engine, then answers timed requests over IPC
 * until told to exit, reporting its own peak RSS. A limits child measures the machine and exits.
 */
import { readFileSync } from 'node:fs'
import { measureLimits } from './limits'
import { openLlamaPeer } from './peer-llama'
import { openTandemPeer } from './peer-tandem'
import type { BenchPeer } from './peer'
import { parseChildInit, parsePeerRequest, type ChildInit, type LimitsMessage, type PeerInit, type PeerMessage, type PeerRequest } from './protocol'

/** How long an orphaned child may take to release its model before it exits anyway. */
const ORPHAN_EXIT_MS = 5000

function send(message: PeerMessage | LimitsMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) {
      reject(new Error('bench child started without an IPC channel (run it through bench/run.ts)'))
      return
    }
    process.send(message, (err: Error | null) => (err ? reject(err) : resolve()))
  })
}

const errorMessage = (e: unknown): string => (e instanceof Error ? (e.stack ?? e.message) : String(e))

/**
 * This process's resident set now and at its peak: /proc/self/status VmRSS and VmHWM on Linux (the
 * kernel's high-water mark, which counts the model file's mapped pages as the engine touches them),
 * else Node's rss and getrusage's ru_maxrss (the same peak, in KiB).
 */
function residentMemory(): { rssBytes: number; peakRssBytes: number } {
  try {
    const status = readFileSync('/proc/self/status', 'utf8')
    const kib = (key: string): number | null => {
      const m = new RegExp(`^${key}:\\s*(\\d+) kB$`, 'm').exec(status)
      return m === null ? null : Number(m[1]) * 1024
    }
    const rss = kib('VmRSS')
    const hwm = kib('VmHWM')
    if (rss !== null && hwm !== null) return { rssBytes: rss, peakRssBytes: hwm }
  } catch {
    // not Linux: fall through
  }
  return { rssBytes: process.memoryUsage().rss, peakRssBytes: process.resourceUsage().maxRSS * 1024 }
}

/** Runs one request; timing covers only the engine call (set-up such as reset is its own request). */
async function handle(peer: BenchPeer, req: PeerRequest): Promise<PeerMessage> {
  switch (req.op) {
    case 'reset': {
      const t0 = performance.now()
      await peer.reset(req.pos)
      return { type: 'result', id: req.id, ms: performance.now() - t0, tokens: [] }
    }
    case 'evaluate': {
      const t0 = performance.now()
      const token = await peer.evaluate(req.tokens, req.pos)
      return { type: 'result', id: req.id, ms: performance.now() - t0, tokens: [token] }
    }
    case 'decode': {
      const t0 = performance.now()
      const tokens = await peer.decode(req.first, req.pos, req.steps)
      return { type: 'result', id: req.id, ms: performance.now() - t0, tokens }
    }
    case 'memory': {
      const m = residentMemory()
      return { type: 'memory', id: req.id, rssBytes: m.rssBytes, peakRssBytes: m.peakRssBytes }
    }
    case 'exit':
      await peer.dispose()
      return { type: 'bye', id: req.id, maxRssBytes: residentMemory().peakRssBytes }
  }
}

async function runPeer(init: PeerInit): Promise<void> {
  const t0 = performance.now()
  const peer = init.peer === 'tandem' ? await openTandemPeer(init) : await openLlamaPeer(init)
  await send({ type: 'ready', loadMs: performance.now() - t0, details: peer.details })
  // the parent went away without an 'exit' request (crash, Ctrl-C): release the model and leave, never linger
  let exiting = false
  process.once('disconnect', () => {
    if (exiting) return
    const timer = setTimeout(() => process.exit(1), ORPHAN_EXIT_MS)
    void peer.dispose().finally(() => {
      clearTimeout(timer)
      process.exit(1)
    })
  })
  // requests are handled strictly one at a time, in arrival order
  let queue = Promise.resolve()
  process.on('message', (raw: unknown) => {
    queue = queue.then(async () => {
      let req: PeerRequest
      try {
        req = parsePeerRequest(raw)
      } catch (e) {
        await send({ type: 'error', id: null, message: errorMessage(e) })
        return
      }
      try {
        if (req.op === 'exit') exiting = true
        const reply = await handle(peer, req)
        await send(reply)
        if (reply.type === 'bye') process.disconnect()
      } catch (e) {
        await send({ type: 'error', id: req.id, message: errorMessage(e) })
      }
    })
  })
}

async function main(): Promise<void> {
  let init: ChildInit
  try {
    init = parseChildInit(process.argv[2] ?? '')
  } catch (e) {
    await send({ type: 'error', id: null, message: `bad child init: ${errorMessage(e)}` })
    process.disconnect()
    return
  }
  try {
    if (init.role === 'limits') {
      const result = await measureLimits(init)
      await send({ type: 'limits', ...result })
      process.disconnect()
    } else {
      await runPeer(init)
    }
  } catch (e) {
    await send({ type: 'error', id: null, message: errorMessage(e) })
    process.disconnect()
  }
}

void main()
