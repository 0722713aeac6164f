/**
 * @file `npm run soak:api`: the local OpenAI-compatible API under sustained load (issue #16). A real `tandem serve
 * --api` child on a fresh data folder with stories260K; 50 clients (the official `openai` npm client) each stream
 * chat completions back to back for 60 s (`--seconds N`, `--clients N`); one stream in ten is abandoned after its
 * first chunk (the client disconnects), and a refused request waits its Retry-After before the next. Then:
 * - every request either completed with a finish reason, was refused with 429, or was abandoned by its client:
 *   nothing else (no 5xx, no reset connection, no stream that ended without its last frame);
 * - the server is idle again (its Device activity shows no generation waiting: a request to it answers at once);
 * - its memory came back to its level before the load (after a warm-up request).
 *
 * Not part of `npm test`: its verdicts are about memory and sustained load on this machine. It prints one JSON line
 * of figures and exits 1 when a check fails.
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import OpenAI from 'openai'
import { sharedModel, tempDir } from '../helpers/paths'
import { rssBytes } from '../helpers/process-memory'
import { startServe, stopServe } from '../helpers/serve-process'

/** Memory may end this much above its level before the load (allocator slack, SQLite page cache). */
const MEMORY_SLACK_BYTES = 64 * 1024 * 1024
/** Tokens per completion: a few dozen chunks per stream. */
const MAX_TOKENS = 48
/** One stream in this many is abandoned after its first chunk. */
const ABANDON_EVERY = 10

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, clients: { type: 'string', default: '50' } } })
const seconds = Number(values.seconds)
const clients = Number(values.clients)
if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`--seconds must be a positive number (got ${values.seconds})`)
if (!Number.isInteger(clients) || clients <= 0) throw new Error(`--clients must be a positive whole number (got ${values.clients})`)

async function main(): Promise<number> {
  const scratch = tempDir('tandem-api-load-')
  const model = sharedModel('stories260K/stories260K.gguf')
  const apiKey = 'api-load-key-0123456789abcdef'
  const server = await startServe(
    ['--port', '0', '--data-dir', join(scratch.dir, 'data'), '--models', join(model, '..'), '--no-open', '--api', '--api-port', '0', '--api-key', apiKey],
    { TANDEM_CACHE_DIR: join(scratch.dir, 'cache'), TANDEM_MODELS_DIR: join(scratch.dir, 'no-models') }
  )
  try {
    const baseURL = (await server.line(/OpenAI-compatible API: (\S+)/))[1]
    const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 })
    const name = 'stories260K.gguf'
    const ask = (max: number) => client.chat.completions.create({ model: name, messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: max, temperature: 0.8, stream: true })
    // warm-up before the memory baseline: the model opened and its graph compiled
    for await (const chunk of await ask(8)) void chunk
    const baselineRss = rssBytes(server.child.pid ?? 0)

    const counts = { completed: 0, refused: 0, abandoned: 0, chunks: 0 }
    const failures: string[] = []
    const endAt = performance.now() + seconds * 1000
    const loop = async (index: number): Promise<void> => {
      for (let turn = 0; performance.now() < endAt; turn++) {
        const abandon = (index + turn) % ABANDON_EVERY === 0
        try {
          const stream = await ask(MAX_TOKENS)
          let finish: string | null = null
          for await (const chunk of stream) {
            counts.chunks++
            finish = chunk.choices[0]?.finish_reason ?? finish
            if (abandon) {
              stream.controller.abort()
              break
            }
          }
          if (abandon) counts.abandoned++
          else if (finish === 'length' || finish === 'stop') counts.completed++
          else failures.push('a stream ended without a finish reason')
        } catch (err) {
          if (err instanceof OpenAI.APIError && err.status === 429) {
            counts.refused++
            const wait = Number(err.headers?.get('retry-after') ?? '1')
            await new Promise((r) => setTimeout(r, Math.min(wait, 5) * 1000))
          } else if (abandon && err instanceof OpenAI.APIUserAbortError) {
            counts.abandoned++
          } else {
            failures.push(err instanceof Error ? `${err.name}: ${err.message}` : String(err))
          }
        }
      }
    }
    const started = performance.now()
    await Promise.all(Array.from({ length: clients }, (_, i) => loop(i)))
    const loadMs = performance.now() - started

    // idle again: a request answers without waiting behind anything
    const idleStarted = performance.now()
    for await (const chunk of await ask(4)) void chunk
    const idleMs = performance.now() - idleStarted
    await new Promise((r) => setTimeout(r, 3000))
    const afterRss = rssBytes(server.child.pid ?? 0)
    const checks = {
      onlyCompletedRefusedOrAbandoned: failures.length === 0,
      someCompleted: counts.completed > 0,
      memoryBack: afterRss <= baselineRss + MEMORY_SLACK_BYTES
    }
    const ok = Object.values(checks).every(Boolean)
    process.stdout.write(
      `${JSON.stringify({
        ok,
        checks,
        seconds,
        clients,
        loadSeconds: Math.round(loadMs / 100) / 10,
        ...counts,
        completedPerSec: Math.round((counts.completed / (loadMs / 1000)) * 10) / 10,
        idleRequestMs: Math.round(idleMs),
        rssMiB: { baseline: Math.round(baselineRss / 2 ** 20), after: Math.round(afterRss / 2 ** 20) },
        failures: failures.slice(0, 10)
      })}\n`
    )
    return ok ? 0 : 1
  } finally {
    await stopServe(server.child)
    scratch.dispose()
  }
}

process.exitCode = await main()
