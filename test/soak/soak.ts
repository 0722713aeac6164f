/**
 * @file `npm run soak`: a bounded soak of the real app on loopback. A `tandem serve` child on a fresh data
 * folder takes 20 conversations replying at once (the chat queue runs them one after another), with searches,
 * model-list calls, conversation lists, usage reads and stops mixed in, for 60 s (`--seconds N`). Then:
 * - no quick call (search, list, usage, stop) waited more than 1 s: the main thread never stalled;
 * - the server's memory came back to its level before the soak (after a warm-up reply, so the model is in it);
 * - nothing acknowledged is lost: after a restart of the server on the same folder, every user message the
 *   server acknowledged is stored as sent, every reply that finished is stored with its final status and text,
 *   and none is left "streaming".
 *
 * Not part of `npm test`: its verdicts are about latency and memory on this machine, which the suite's
 * verdicts never are. It prints one JSON line of figures and exits 1 when a check fails.
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { Api, ChatEvent, Message } from '../../preload/api'
import { createHttpApi } from '../../renderer/src/api/http-api'
import { sharedModel, tempDir } from '../helpers/paths'
import { rssBytes } from '../helpers/process-memory'
import { startServe, stopServe, type ServeProcess } from '../helpers/serve-process'

/** Conversations replying at the same time. */
const CONVERSATIONS = 20

/** Longest a quick call may take: it does no work that could take longer, so more means something stalled. */
const MAX_QUICK_CALL_MS = 1000

/** Memory may end this much above its level before the soak (allocator slack, SQLite page cache). */
const MEMORY_SLACK_BYTES = 64 * 1024 * 1024

/** Tokens per reply: long enough that stops land mid-reply, short enough that every conversation gets turns. */
const REPLY_TOKENS = 120

/** Words the messages are made of, and what the searches look for. */
const WORDS = ['lantern', 'harbour', 'orchid', 'pebble', 'meadow', 'comet', 'violin', 'glacier', 'saffron', 'thimble']

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' } } })
const seconds = Number(values.seconds)
if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`--seconds must be a positive number (got ${values.seconds})`)

/** A deterministic stream of choices, so two runs send the same traffic. */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0
    return s / 2 ** 32
  }
}

/** What the server acknowledged: the user message it stored, and the reply as it finished (null if the call failed). */
interface Acknowledged {
  readonly user: Message
  final: Message | null
}

/** Latencies of one kind of quick call. */
class Latencies {
  private readonly ms: number[] = []
  async time<T>(call: () => Promise<T>): Promise<T> {
    const start = performance.now()
    try {
      return await call()
    } finally {
      this.ms.push(performance.now() - start)
    }
  }
  summary(): { calls: number; p50Ms: number; p99Ms: number; maxMs: number } {
    const sorted = [...this.ms].sort((a, b) => a - b)
    const at = (q: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0)
    return { calls: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: Math.round(sorted[sorted.length - 1] ?? 0) }
  }
}

async function main(): Promise<number> {
  const scratch = tempDir('tandem-soak-')
  const dataDir = join(scratch.dir, 'data')
  const model = sharedModel('stories260K/stories260K.gguf')
  const serveArgs = ['--port', '0', '--data-dir', dataDir, '--models', join(model, '..'), '--no-open']
  const env = { TANDEM_CACHE_DIR: join(scratch.dir, 'cache'), TANDEM_MODELS_DIR: join(scratch.dir, 'no-models') }
  let server: ServeProcess | null = await startServe(serveArgs, env)
  try {
    const api = createHttpApi(`${server.origin}/`, server.token)
    const entry = (await api.models.list()).find((m) => m.path === model)
    if (entry === undefined) throw new Error(`${model} is not listed`)
    const sampling = { temperature: 0.8, topP: 0.95, maxTokens: REPLY_TOKENS }

    // Warm-up before the memory baseline: the model opened and its graph compiled, the search worker started,
    // the usage sampler running — what any session has after its first reply and search.
    const warm = await api.conversations.create({ modelId: entry.id, sampling })
    await api.chat.send({ requestId: 'warm-up', conversationId: warm.id, content: 'Once upon a time' }, () => undefined)
    await Promise.all([api.conversations.search(WORDS[0]), api.models.list(), api.devices.usage(0)])
    const baselineRss = rssBytes(server.child.pid ?? 0)

    const quick = { search: new Latencies(), models: new Latencies(), conversations: new Latencies(), usage: new Latencies(), stop: new Latencies() }
    const acknowledged = new Map<string, Acknowledged[]>()
    const failures: string[] = []
    let stopsRequested = 0
    const endAt = performance.now() + seconds * 1000
    const running = (): boolean => performance.now() < endAt

    const converse = async (index: number): Promise<void> => {
      const next = rng(1000 + index)
      const conversation = await api.conversations.create({ modelId: entry.id, sampling })
      const log: Acknowledged[] = []
      acknowledged.set(conversation.id, log)
      for (let turn = 0; running(); turn++) {
        const content = Array.from({ length: 5 + Math.floor(next() * 20) }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ')
        const requestId = `c${index}-t${turn}`
        const stopAfterDeltas = next() < 0.2 ? 1 + Math.floor(next() * 20) : -1
        let deltas = 0
        const acks: Acknowledged[] = []
        const onEvent = (event: ChatEvent): void => {
          if (event.type === 'started' && event.userMessage !== null) {
            const ack = { user: event.userMessage, final: null }
            acks.push(ack)
            log.push(ack)
          } else if (event.type === 'delta' && ++deltas === stopAfterDeltas) {
            stopsRequested++
            quick.stop.time(() => api.chat.stop(requestId)).catch((err: unknown) => failures.push(`stop: ${String(err)}`))
          }
        }
        try {
          const final = await api.chat.send({ requestId, conversationId: conversation.id, content }, onEvent)
          for (const ack of acks) ack.final = final
        } catch (err) {
          failures.push(`send ${requestId}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`)
        }
      }
    }
    const poll = async (seed: number, call: (next: () => number) => Promise<unknown>): Promise<void> => {
      const next = rng(seed)
      while (running()) {
        try {
          await call(next)
        } catch (err) {
          failures.push(`call: ${String(err)}`)
        }
      }
    }
    let sinceMs = 0
    await Promise.all([
      ...Array.from({ length: CONVERSATIONS }, (_, i) => converse(i)),
      poll(1, (next) => quick.search.time(() => api.conversations.search(WORDS[Math.floor(next() * WORDS.length)]))),
      poll(2, () => quick.models.time(() => api.models.list())),
      poll(3, () => quick.conversations.time(() => api.conversations.list())),
      poll(4, async () => {
        const samples = await quick.usage.time(() => api.devices.usage(sinceMs))
        sinceMs = samples.at(-1)?.atMs ?? sinceMs
      })
    ])

    // Memory after the soak, once the server is idle again (the sampler's fast rate ends, buffers are freed).
    await new Promise((r) => setTimeout(r, 3000))
    const afterRss = rssBytes(server.child.pid ?? 0)

    // Restart on the same folder: what the server acknowledged must be on disk.
    await stopServe(server.child)
    server = await startServe(serveArgs, env)
    const reopened: Api = createHttpApi(`${server.origin}/`, server.token)
    let replies = 0
    let lost = 0
    for (const [conversationId, log] of acknowledged) {
      const stored = new Map((await reopened.conversations.get(conversationId)).messages.map((m) => [m.id, m]))
      for (const { user, final } of log) {
        const u = stored.get(user.id)
        if (u === undefined || u.content !== user.content) lost++
        if (final === null) continue
        replies++
        const a = stored.get(final.id)
        if (a === undefined || a.status !== final.status || a.content !== final.content) lost++
      }
      for (const m of stored.values()) if (m.status === 'streaming') lost++
    }

    const latency = Object.fromEntries(Object.entries(quick).map(([name, l]) => [name, l.summary()]))
    const slowest = Math.max(...Object.values(quick).map((l) => l.summary().maxMs))
    const checks = {
      noStall: slowest <= MAX_QUICK_CALL_MS,
      memoryBack: afterRss <= baselineRss + MEMORY_SLACK_BYTES,
      nothingLost: lost === 0,
      noFailedCalls: failures.length === 0
    }
    const report = {
      seconds,
      conversations: CONVERSATIONS,
      replies,
      userMessages: [...acknowledged.values()].reduce((n, log) => n + log.length, 0),
      stopsRequested,
      latency,
      rssMiB: { baseline: Math.round(baselineRss / 2 ** 20), after: Math.round(afterRss / 2 ** 20) },
      lost,
      failures: failures.slice(0, 10),
      checks
    }
    process.stdout.write(`${JSON.stringify(report)}\n`)
    return Object.values(checks).every(Boolean) ? 0 : 1
  } finally {
    if (server !== null) await stopServe(server.child)
    scratch.dispose()
  }
}

process.exitCode = await main()
