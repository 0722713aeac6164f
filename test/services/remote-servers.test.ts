/**
 * @file Other servers in the app (issue #16): added in Settings (URL rules, a server that does not answer or refuses
 * the key is not added), the key never in the database in clear (sealed by a keychain, or kept in memory and asked
 * for again after a restart), its models listed and picked like local ones, and chat, summaries and the local API
 * running on them. The server is real: another Tandem's OpenAI-compatible API over the real engine, so a reply
 * through it must be the very greedy text the same model gives here. A misbehaving server stalls, drops the stream
 * halfway and answers with errors.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import OpenAI from 'openai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOpenAiHost, type OpenAiHost } from '../../main/server'
import type { KeySealer } from '../../main/services'
import type { ChatEvent, Conversation, Message, ModelEntry, RemoteServers, SummaryOutcome } from '../../preload/api'
import { startFlakyServer, type FlakyServer } from '../helpers/flaky-openai-server'
import { appFixture, CHAT_MODEL, paceGate, streamCall, type AppFixture } from './app-fixture'

const MODEL = 'stories260K.bin'
const SERVER_KEY = 'remote-servers-key-0123456789abcdef'

/** A stand-in for the OS keychain (Electron's safeStorage is not here): AES-GCM under a key this test holds. */
function testSealer(): KeySealer & { readonly secret: Buffer } {
  const secret = randomBytes(32)
  return {
    secret,
    seal(text) {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', secret, iv)
      const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
      return Buffer.concat([iv, cipher.getAuthTag(), body])
    },
    open(sealed) {
      const b = Buffer.from(sealed)
      const decipher = createDecipheriv('aes-256-gcm', secret, b.subarray(0, 12))
      decipher.setAuthTag(b.subarray(12, 28))
      return Buffer.concat([decipher.update(b.subarray(28)), decipher.final()]).toString('utf8')
    }
  }
}

let remote: AppFixture
let host: OpenAiHost
let flaky: FlakyServer

beforeAll(async () => {
  remote = appFixture()
  host = await startOpenAiHost({
    backend: { models: () => remote.app.models.list(), complete: (job, onText, signal) => remote.app.chat.complete(job, onText, signal), pendingGenerations: () => remote.app.chat.pendingGenerations },
    apiKey: SERVER_KEY
  })
  flaky = await startFlakyServer()
})
afterAll(async () => {
  await flaky.close()
  await host.close()
  await remote.dispose()
})

let n = 0
const requestId = (): string => `remote-${++n}`
const deltas = (events: readonly ChatEvent[]): string => events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('')

/** The remote model entry of `server` in the app's list. */
async function remoteEntry(f: AppFixture, server: string, name = MODEL): Promise<ModelEntry> {
  const entry = (await f.ok<ModelEntry[]>('models:list')).find((m) => m.server === server && m.name === name)
  if (entry === undefined) throw new Error(`${name} on ${server} is not listed`)
  return entry
}

/** Sends `content` in a new conversation on `modelId`; resolves with the outcome and events. */
async function chatOn(f: AppFixture, modelId: string, content: string, maxTokens = 24): Promise<{ message: Message | null; error: string | null; events: ChatEvent[] }> {
  const conv = await f.ok<Conversation>('conversations:create', { modelId, sampling: { temperature: 0, topP: 1, maxTokens } })
  const { outcome, events } = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content })
  const stored = f.app.store.messages.list(conv.id).at(-1)
  return { message: outcome.ok ? (outcome.result as Message) : (stored === undefined ? null : { ...stored, stats: null }), error: outcome.ok ? null : outcome.error.message, events }
}

describe('other servers in the app', () => {
  it('is added only when it answers: URL rules, an unreachable server and a refused key change nothing', async () => {
    const f = appFixture()
    try {
      const add = (url: string, apiKey: string | null = SERVER_KEY, name = 'GPU box') => f.call('servers:add', { name, url, apiKey })
      expect(await add('http://192.168.1.20:8000/v1')).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(/needs https:\/\//) } })
      expect(await add('https://user:pw@example.com/v1')).toMatchObject({ ok: false, error: { message: expect.stringMatching(/key field/) } })
      expect(await add('http://127.0.0.1:1/v1')).toMatchObject({ ok: false, error: { name: 'RemoteError', message: expect.stringMatching(/GPU box was not added: Could not reach 127\.0\.0\.1:1/) } })
      expect(await add(host.baseUrl, 'wrong-key-0123456789')).toMatchObject({ ok: false, error: { name: 'RemoteError', message: expect.stringMatching(/refused the key \(HTTP 401\)/) } })
      expect(await add(host.baseUrl, SERVER_KEY, '  ')).toMatchObject({ ok: false, error: { name: 'ValidationError' } })
      expect(await add(host.baseUrl, SERVER_KEY, 'x'.repeat(81))).toMatchObject({ ok: false, error: { name: 'ValidationError' } })
      expect(await f.call('servers:add', { name: 'a', url: host.baseUrl, apiKey: 'line\nbreak' })).toMatchObject({ ok: false, error: { name: 'ValidationError' } })
      expect(await f.ok<RemoteServers>('servers:list')).toEqual({ keychain: false, servers: [] })
      expect((await f.ok<ModelEntry[]>('models:list')).some((m) => m.format === 'remote')).toBe(false)
      // a name is taken once
      await f.ok('servers:add', { name: 'GPU box', url: host.baseUrl, apiKey: SERVER_KEY })
      expect(await add(host.baseUrl, SERVER_KEY, 'gpu BOX')).toMatchObject({ ok: false, error: { message: expect.stringMatching(/already/) } })
    } finally {
      await f.dispose()
    }
  })

  it('without a keychain the key lives in memory only: never in the database file; after a restart it is asked for again', async () => {
    const f = appFixture()
    const dir = f.dir
    let reopened: AppFixture | null = null
    try {
      const added = await f.ok<RemoteServers>('servers:add', { name: 'Loopback', url: host.baseUrl, apiKey: SERVER_KEY })
      expect(added.servers).toEqual([expect.objectContaining({ name: 'Loopback', url: host.baseUrl, key: 'memory', problem: null, models: expect.arrayContaining([MODEL]) })])
      const entry = await remoteEntry(f, 'Loopback')
      expect(entry).toMatchObject({ format: 'remote', origin: 'server', problem: null, contextLength: 512, path: host.baseUrl })
      expect((await chatOn(f, entry.id, 'Once upon a time')).message?.status).toBe('complete')
      await f.app.dispose()
      const file = readFileSync(join(dir, 'data', 'tandem.db'))
      expect(file.includes(Buffer.from(SERVER_KEY))).toBe(false)
      reopened = appFixture({ dir })
      const after = await reopened.ok<RemoteServers>('servers:list')
      expect(after.servers[0]).toMatchObject({ key: 'missing', problem: expect.stringMatching(/kept only until Tandem quit/) })
      // a chat with its model says why it cannot run, and keeps the user's message
      const refused = await chatOn(reopened, entry.id, 'Hello')
      expect(refused.error).toMatch(/enter it again/)
      expect(refused.message).toMatchObject({ status: 'error' })
      await reopened.ok('servers:setKey', after.servers[0].id, SERVER_KEY)
      expect((await reopened.ok<RemoteServers>('servers:list')).servers[0]).toMatchObject({ key: 'memory', problem: null })
      expect((await chatOn(reopened, entry.id, 'Once upon a time')).message?.status).toBe('complete')
    } finally {
      await reopened?.dispose()
      await f.dispose().catch(() => undefined)
    }
  })

  it('with a keychain the database holds the key only sealed, and a restart with the same keychain uses it', async () => {
    const sealer = testSealer()
    const f = appFixture({ keySealer: sealer })
    const dir = f.dir
    let reopened: AppFixture | null = null
    try {
      expect((await f.ok<RemoteServers>('servers:add', { name: 'Sealed', url: host.baseUrl, apiKey: SERVER_KEY })).servers[0].key).toBe('keychain')
      await f.app.dispose()
      const file = readFileSync(join(dir, 'data', 'tandem.db'))
      expect(file.includes(Buffer.from(SERVER_KEY))).toBe(false)
      reopened = appFixture({ dir, keySealer: sealer })
      // the first lists after a start ask the server; a second list while that round runs waits for it too
      const [first, second] = await Promise.all([reopened.ok<ModelEntry[]>('models:list'), reopened.ok<ModelEntry[]>('models:list')])
      for (const list of [first, second]) expect(list.filter((m) => m.server === 'Sealed').map((m) => m.name)).toContain(MODEL)
      expect((await reopened.ok<RemoteServers>('servers:list')).servers[0]).toMatchObject({ key: 'keychain', problem: null })
      const entry = await remoteEntry(reopened, 'Sealed')
      expect((await chatOn(reopened, entry.id, 'Once upon a time')).message?.status).toBe('complete')
    } finally {
      await reopened?.dispose()
      await f.dispose().catch(() => undefined)
    }
  })

  describe('on one app with the servers added', () => {
    let f: AppFixture
    const gate = paceGate()
    let loopback: ModelEntry
    let flakyModel: ModelEntry
    beforeAll(async () => {
      // local replies wait on a gate (opened for the tests that use the local model), remote ones never do
      f = appFixture({ pace: gate.pace, remoteStallMs: 2000 })
      gate.release(1_000_000)
      await f.ok('servers:add', { name: 'Loopback', url: host.baseUrl, apiKey: SERVER_KEY })
      await f.ok('servers:add', { name: 'Flaky', url: flaky.url, apiKey: null })
      loopback = await remoteEntry(f, 'Loopback')
      flakyModel = await remoteEntry(f, 'Flaky', 'flaky-7b')
    })
    afterAll(async () => {
      await f.dispose()
    })

    it('a reply on the server is the same greedy text as here, streamed, with the counts the server reported', async () => {
      const here = await chatOn(f, CHAT_MODEL(), 'Once upon a time')
      const there = await chatOn(f, loopback.id, 'Once upon a time')
      expect(there.message?.content).toBe(here.message?.content)
      expect(deltas(there.events)).toBe(there.message?.content)
      expect(there.message?.stats).toMatchObject({ model: MODEL, devices: [], generatedTokens: 24, promptTokens: here.message?.stats?.promptTokens, server: { name: 'Loopback', usageReported: true } })
    })

    it('runs beside a local reply instead of queueing behind it', async () => {
      const held = paceGate()
      const g = appFixture({ pace: held.pace })
      try {
        await g.ok('servers:add', { name: 'Loopback', url: host.baseUrl, apiKey: SERVER_KEY })
        const local = await g.conversation(48)
        const localId = requestId()
        const localReply = streamCall(g.app, 'chat:send', { requestId: localId, conversationId: local.id, content: 'Once upon a time' })
        await held.calls(1)
        // the local reply is held before its second token; the remote one completes meanwhile
        const there = await chatOn(g, (await remoteEntry(g, 'Loopback')).id, 'Once upon a time')
        expect(there.message?.status).toBe('complete')
        expect(held.count()).toBe(1)
        expect(await g.ok('chat:stop', localId)).toBe(true)
        expect((await localReply).outcome).toMatchObject({ ok: true, result: { status: 'stopped' } })
      } finally {
        await g.dispose()
      }
    })

    it('a stream dropped halfway keeps its text and says so; an error answer is the server’s message; a stall is given up', async () => {
      flaky.behaviour = 'drop'
      const dropped = await chatOn(f, flakyModel.id, 'Hi')
      expect(dropped.error).toMatch(/connection to 127\.0\.0\.1:\d+ dropped after 16 characters/)
      expect(dropped.message).toMatchObject({ status: 'error', content: 'Once upon a time' })
      flaky.behaviour = 'error-500'
      const failed = await chatOn(f, flakyModel.id, 'Hi')
      expect(failed.error).toMatch(/answered HTTP 500: CUDA out of memory/)
      expect(failed.message).toMatchObject({ status: 'error', content: '' })
      flaky.behaviour = 'stall'
      const stalled = await chatOn(f, flakyModel.id, 'Hi')
      expect(stalled.error).toMatch(/stopped sending for 2 s after 9 characters|did not answer within 2 s/)
      expect(stalled.message?.status).toBe('error')
    })

    it('Stop ends a remote reply there, keeping its text', async () => {
      flaky.behaviour = 'stall'
      const conv = await f.ok<Conversation>('conversations:create', { modelId: flakyModel.id })
      const id = requestId()
      const { outcome } = await streamCall(f.app, 'chat:send', { requestId: id, conversationId: conv.id, content: 'Hi' }, (e) => {
        if (e.type === 'delta') void f.ok('chat:stop', id)
      })
      expect(outcome).toMatchObject({ ok: true, result: { status: 'stopped', content: 'Once upon', stats: { server: { name: 'Flaky', usageReported: false }, generatedTokens: 1 } } })
    })

    it('summarizes a file on the server', async () => {
      const text = 'Tim had a red ball. He played with it in the park every day. One day the ball rolled into the pond and a duck brought it back.'
      // a file is summarized by the default model
      await f.ok('settings:update', { defaultModelId: loopback.id })
      const { outcome } = await streamCall(f.app, 'summaries:start', { requestId: requestId(), fileName: 'ball.txt', data: Buffer.from(text).toString('base64'), reuse: false })
      await f.ok('settings:update', { defaultModelId: null })
      if (!outcome.ok) throw new Error(outcome.error.message)
      const result = outcome.result as SummaryOutcome
      expect(result.message).toMatchObject({ status: 'complete', stats: { server: { name: 'Loopback', usageReported: true } } })
      expect(result.message.content.length).toBeGreaterThan(0)
      expect(f.app.conversations.require(result.conversationId).modelId).toBe(loopback.id)
    })

    it('the local API offers the server’s models as "<server>/<model>" and answers through it with the same text', async () => {
      const api = await startOpenAiHost({
        backend: { models: () => f.app.models.list(), complete: (job, onText, signal) => f.app.chat.complete(job, onText, signal), pendingGenerations: () => f.app.chat.pendingGenerations },
        apiKey: 'client-api-key-0123456789'
      })
      try {
        const client = new OpenAI({ baseURL: api.baseUrl, apiKey: api.apiKey, maxRetries: 0 })
        const ids = (await client.models.list()).data.map((m) => m.id)
        expect(ids).toEqual(expect.arrayContaining([MODEL, `Loopback/${MODEL}`, 'Flaky/flaky-7b']))
        const ask = (model: string) => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 16, temperature: 0 })
        const [here, there] = [await ask(MODEL), await ask(`Loopback/${MODEL}`)]
        expect(there.choices[0].message.content).toBe(here.choices[0].message.content)
        expect(there.usage).toMatchObject({ completion_tokens: 16, prompt_tokens: here.usage?.prompt_tokens })
        const text = await client.completions.create({ model: `Loopback/${MODEL}`, prompt: 'Once upon a time', max_tokens: 8, temperature: 0 })
        const local = await client.completions.create({ model: MODEL, prompt: 'Once upon a time', max_tokens: 8, temperature: 0 })
        expect(text.choices[0].text).toBe(local.choices[0].text)
        flaky.behaviour = 'error-500'
        await expect(ask('Flaky/flaky-7b')).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/CUDA out of memory/) })
      } finally {
        await api.close()
      }
    })

    it('Tandem added as a server of itself: its list is not fed back into itself, and a new key does not wait on itself', async () => {
      const g = appFixture()
      const own = await startOpenAiHost({
        backend: { models: () => g.app.models.list(), complete: (job, onText, signal) => g.app.chat.complete(job, onText, signal), pendingGenerations: () => g.app.chat.pendingGenerations },
        apiKey: SERVER_KEY
      })
      try {
        const { servers } = await g.ok<RemoteServers>('servers:add', { name: 'Self', url: own.baseUrl, apiKey: SERVER_KEY })
        const local = (await g.app.models.list()).filter((m) => m.server === undefined).map((m) => m.name)
        const listed = async (): Promise<string[]> => (await g.ok<RemoteServers>('servers:list')).servers[0].models.toSorted()
        // asked again and again, the list stays this app's own models: never "Self/…", "Self/Self/…"
        for (let round = 0; round < 3; round++) expect(await listed()).toEqual(local.toSorted())
        const after = await g.ok<RemoteServers>('servers:setKey', servers[0].id, SERVER_KEY)
        expect(after.servers[0]).toMatchObject({ problem: null, models: expect.arrayContaining(local) })
        expect((await chatOn(g, (await remoteEntry(g, 'Self')).id, 'Once upon a time')).message?.status).toBe('complete')
      } finally {
        await own.close()
        await g.dispose()
      }
    })

    it('a removed server takes its models with it; a conversation on one asks for another model', async () => {
      const g = appFixture()
      try {
        const { servers } = await g.ok<RemoteServers>('servers:add', { name: 'Gone soon', url: host.baseUrl, apiKey: SERVER_KEY })
        const entry = await remoteEntry(g, 'Gone soon')
        expect(await g.call('models:remove', entry.id)).toMatchObject({ ok: false, error: { message: expect.stringMatching(/remove the server/) } })
        expect((await g.ok<RemoteServers>('servers:remove', servers[0].id)).servers).toEqual([])
        expect((await g.ok<ModelEntry[]>('models:list')).some((m) => m.server !== undefined)).toBe(false)
        expect((await chatOn(g, entry.id, 'Hello')).error).toMatch(/not offered any more/)
      } finally {
        await g.dispose()
      }
    })
  })
})
