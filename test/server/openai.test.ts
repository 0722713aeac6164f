/**
 * @file The local OpenAI-compatible API with the official `openai` client, against the real app (stories260K in its
 * worker, a real SQLite file): models, chat and text completions streamed and whole (the same greedy text both ways),
 * usage, stop sequences and max_tokens, errors in OpenAI's shape for a wrong key, an unknown model, malformed JSON,
 * wrong types, a huge body and a foreign Host; a client that disconnects stops its generation; the bounded queue
 * answers 429 with Retry-After; and a burst of 50 concurrent streams where every request completes or is refused.
 */
import { request } from 'node:http'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOpenAiHost, type OpenAiHost } from '../../main/server'
import { announceBody } from '../helpers/announce'
import { appFixture, paceGate, type AppFixture } from '../services/app-fixture'

const MODEL = 'stories260K.bin'
const gate = paceGate()
let f: AppFixture
let host: OpenAiHost
let client: OpenAI
/** while true the gate lets every token through at once */
let open = true

beforeAll(async () => {
  f = appFixture({ pace: (signal) => (open ? Promise.resolve() : gate.pace(signal)) })
  host = await startOpenAiHost({
    backend: { models: () => f.app.models.list(), complete: (job, onText, signal) => f.app.chat.complete(job, onText, signal), pendingGenerations: () => f.app.chat.pendingGenerations },
    apiKey: 'test-key-0123456789abcdef',
    maxQueue: 3
  })
  client = new OpenAI({ baseURL: host.baseUrl, apiKey: host.apiKey, maxRetries: 0 })
})
afterAll(async () => {
  await host.close()
  await f.dispose()
})

/** A raw request, for what the client will not send (a foreign Host, broken JSON). */
function raw(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: host.port, method: 'POST', path, headers: { 'Content-Type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const auth = { Authorization: `Bearer test-key-0123456789abcdef` }

/** The OpenAI error body's fields (status, type, param, code) of a failed client call. */
async function failure(call: Promise<unknown>): Promise<{ status: number | undefined; type: unknown; param: unknown; code: unknown }> {
  try {
    await call
  } catch (err) {
    if (err instanceof OpenAI.APIError) return { status: err.status, type: err.type, param: err.param, code: err.code }
    throw err
  }
  throw new Error('the call succeeded')
}

describe('the OpenAI-compatible API', () => {
  it('lists the models, and one by name', async () => {
    const list = await client.models.list()
    expect(list.data.map((m) => m.id)).toContain(MODEL)
    expect(await client.models.retrieve(MODEL)).toMatchObject({ id: MODEL, object: 'model', owned_by: 'tandem' })
  })

  it('chat completions: whole and streamed give the same greedy text, with usage', async () => {
    const messages = [{ role: 'user' as const, content: 'Once upon a time' }]
    const whole = await client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 24 })
    expect(whole.object).toBe('chat.completion')
    const text = whole.choices[0].message.content ?? ''
    expect(text.length).toBeGreaterThan(10)
    expect(whole.choices[0].finish_reason).toBe('length')
    expect(whole.usage).toMatchObject({ completion_tokens: 24, prompt_tokens: expect.any(Number) })
    expect(whole.usage?.total_tokens).toBe((whole.usage?.prompt_tokens ?? 0) + 24)

    const stream = await client.chat.completions.create({ model: MODEL, messages, temperature: 0, max_tokens: 24, stream: true, stream_options: { include_usage: true } })
    let streamed = ''
    let finish: string | null = null
    let usage: OpenAI.CompletionUsage | null | undefined = null
    let chunks = 0
    for await (const chunk of stream) {
      chunks++
      expect(chunk.object).toBe('chat.completion.chunk')
      streamed += chunk.choices[0]?.delta.content ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
      if (chunk.usage) usage = chunk.usage
    }
    expect(streamed).toBe(text)
    expect(chunks).toBeGreaterThan(3)
    expect(finish).toBe('length')
    expect(usage).toEqual(whole.usage)
  })

  it('text completions, a stop sequence, and a seed that makes sampling repeatable', async () => {
    const first = await client.completions.create({ model: MODEL, prompt: 'Once upon a time', temperature: 0, max_tokens: 32 })
    const text = first.choices[0].text
    expect(first.object).toBe('text_completion')
    // stop at the first word after the opening ones: the text ends before it, finish_reason 'stop'
    const cut = text.trim().split(/\s+/)[3]
    const stopped = await client.completions.create({ model: MODEL, prompt: 'Once upon a time', temperature: 0, max_tokens: 32, stop: [cut] })
    expect(stopped.choices[0].finish_reason).toBe('stop')
    expect(text.startsWith(stopped.choices[0].text)).toBe(true)
    expect(stopped.choices[0].text).not.toContain(cut)
    const sample = (): Promise<OpenAI.Completion> => client.completions.create({ model: MODEL, prompt: 'Once upon a time', temperature: 1, seed: 42, max_tokens: 16 })
    expect((await sample()).choices[0].text).toBe((await sample()).choices[0].text)
  })

  it('errors come in OpenAI’s shape', async () => {
    const wrongKey = new OpenAI({ baseURL: host.baseUrl, apiKey: 'not-the-key-at-all', maxRetries: 0 })
    expect(await failure(wrongKey.models.list())).toMatchObject({ status: 401, type: 'authentication_error', code: 'invalid_api_key' })
    expect(await failure(client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }))).toMatchObject({
      status: 404,
      type: 'not_found_error',
      code: 'model_not_found',
      param: 'model'
    })
    // wrong types and unsupported options name the parameter
    const bad = (extra: Record<string, unknown>): Promise<unknown> => client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...extra })
    expect(await failure(bad({ temperature: 'hot' }))).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'temperature' })
    expect(await failure(bad({ max_tokens: 0 }))).toMatchObject({ status: 400, param: 'max_tokens' })
    expect(await failure(bad({ n: 2 }))).toMatchObject({ status: 400, param: 'n' })
    expect(await failure(bad({ messages: [{ role: 'robot', content: 'hi' }] }))).toMatchObject({ status: 400, param: 'messages[0].role' })
    expect(await failure(bad({ messages: [] }))).toMatchObject({ status: 400, param: 'messages' })
    const json = await raw('/v1/chat/completions', '{"model": ', auth)
    expect(json.status).toBe(400)
    expect(JSON.parse(json.body)).toEqual({ error: { message: 'The body is not valid JSON.', type: 'invalid_request_error', param: null, code: null } })
    const huge = await announceBody(host.port, '/v1/chat/completions', { ...auth, 'Content-Type': 'application/json' }, 9 * 1024 * 1024)
    expect(huge.status).toBe(413)
    const foreign = await raw('/v1/chat/completions', '{}', { ...auth, Host: 'attacker.example:80' })
    expect(foreign.status).toBe(403)
    expect((await raw('/v1/embeddings', '{}', auth)).status).toBe(404)
  })

  it('a client that disconnects stops its generation; the queue is bounded (429 with Retry-After)', async () => {
    open = false
    try {
      const controller = new AbortController()
      // counted before the request: its first wait at the gate may come before the loop below starts
      const base = gate.count()
      const long = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 500, stream: true }, { signal: controller.signal })
      const reading = (async () => {
        let n = 0
        try {
          for await (const chunk of long) if ((chunk.choices[0]?.delta.content ?? '') !== '' && ++n === 2) controller.abort()
        } catch {
          // the abort ends the iteration
        }
        return n
      })()
      // one token at a time, each let through only once the generation waits for it (no credit left over):
      // the second content chunk aborts the client
      let finished = false
      void reading.then(() => (finished = true))
      for (let k = base + 1; !finished; k++) {
        await Promise.race([gate.calls(k), reading])
        if (!finished) gate.release(1)
      }
      // the reader may take a chunk already on its way before its abort lands
      expect(await reading).toBeGreaterThanOrEqual(2)
      // the server saw the disconnect and stopped the generation (it would otherwise wait at the gate for 500 tokens)
      await expect.poll(() => f.app.chat.pendingGenerations, { timeout: 10_000 }).toBe(0)

      // three held at the gate fill the queue; the fourth is refused with Retry-After
      const held = Array.from({ length: 3 }, () => client.completions.create({ model: MODEL, prompt: 'Once', max_tokens: 3, temperature: 0 }))
      await expect.poll(() => f.app.chat.pendingGenerations).toBe(3)
      const refused = await raw('/v1/completions', JSON.stringify({ model: MODEL, prompt: 'Once', max_tokens: 3 }), auth)
      expect(refused.status).toBe(429)
      expect(refused.headers['retry-after']).toBe('2')
      expect(JSON.parse(refused.body).error.type).toBe('rate_limit_error')
      open = true
      gate.release(1000)
      const done = await Promise.all(held)
      expect(done.map((d) => d.usage?.completion_tokens)).toEqual([3, 3, 3])
    } finally {
      open = true
      gate.release(1000)
    }
  })

  it('a burst of 50 concurrent streams: each completes or is refused with 429, and nothing is left running', async () => {
    const heapBefore = process.memoryUsage().heapUsed
    for (let round = 0; round < 2; round++) {
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, async () => {
          try {
            const s = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Tell me a story' }], max_tokens: 8, stream: true })
            let finish: string | null = null
            for await (const chunk of s) finish = chunk.choices[0]?.finish_reason ?? finish
            return finish === 'length' || finish === 'stop' ? 'completed' : `ended without a finish reason`
          } catch (err) {
            return err instanceof OpenAI.APIError && err.status === 429 ? 'refused' : `failed: ${String(err)}`
          }
        })
      )
      expect(outcomes.filter((o) => o !== 'completed' && o !== 'refused')).toEqual([])
      expect(outcomes.filter((o) => o === 'completed').length).toBeGreaterThanOrEqual(3)
      expect(f.app.chat.pendingGenerations).toBe(0)
    }
    // no growth to speak of across two bursts (a leak per request would show as megabytes)
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(64 * 1024 * 1024)
  })
})
