/**
 * @file Entry of the benchmark's child processes (forked by the parent with `--import tsx`; argv[2] is
 * the JSON init). A peer child loads one model in one engine, then answers timed requests over IPC
 * until told to exit, reporting its own peak RSS. A limits child measures the machine and exits.
 */
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
    case 'exit':
      await peer.dispose()
      return { type: 'bye', id: req.id, maxRssBytes: process.resourceUsage().maxRSS * 1024 }
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
