/**
 * @file Other servers as backends: the URL rules (plain HTTP only on this machine), the model list and a streamed
 * chat from a real OpenAI-compatible server (Tandem's own API over the real engine: the same greedy text as asking
 * the engine directly), and servers that misbehave — one that stalls, one that drops the stream halfway, one that
 * answers with errors or refuses the key, one that is not there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startOpenAiHost, type OpenAiHost } from '../../main/server'
import { checkServerUrl, listRemoteModels, RemoteError, streamRemoteChat, type RemoteChatRequest } from '../../main/services/remote'
import { startFlakyServer, type FlakyBehaviour, type FlakyServer } from '../helpers/flaky-openai-server'
import { appFixture, type AppFixture } from './app-fixture'

const MODEL = 'stories260K.bin'
let f: AppFixture
let host: OpenAiHost
let flaky: FlakyServer

beforeAll(async () => {
  f = appFixture()
  host = await startOpenAiHost({
    backend: { models: () => f.app.models.list(), complete: (job, onText, signal) => f.app.chat.complete(job, onText, signal), pendingGenerations: () => f.app.chat.pendingGenerations },
    apiKey: 'remote-test-key-0123456789'
  })
  flaky = await startFlakyServer()
})
afterAll(async () => {
  await flaky.close()
  await host.close()
  await f.dispose()
})

const CHAT: RemoteChatRequest = { model: MODEL, messages: [{ role: 'user', content: 'Once upon a time' }], maxTokens: 24, temperature: 0, topP: 1, seed: null, stop: [] }

describe('other servers as backends', () => {
  it('plain HTTP only to this machine; HTTPS elsewhere; no credentials in the URL', () => {
    expect(checkServerUrl('http://127.0.0.1:8000/v1').host).toBe('127.0.0.1:8000')
    expect(checkServerUrl('http://localhost:11434/v1').hostname).toBe('localhost')
    expect(checkServerUrl('https://gpu-box.example.com/v1').protocol).toBe('https:')
    expect(() => checkServerUrl('http://192.168.1.20:8000/v1')).toThrow(/needs https:\/\//)
    expect(() => checkServerUrl('https://user:pw@example.com/v1')).toThrow(/key field/)
    expect(() => checkServerUrl('ftp://example.com')).toThrow(/https:\/\//)
    expect(() => checkServerUrl('not a url')).toThrow(RemoteError)
  })

  it('lists a real server’s models and streams its greedy reply, the same text the engine gives directly', async () => {
    const server = { baseUrl: host.baseUrl, apiKey: host.apiKey }
    expect((await listRemoteModels(server)).map((m) => m.id)).toContain(MODEL)
    const pieces: string[] = []
    const result = await streamRemoteChat(server, CHAT, (t) => pieces.push(t))
    expect(pieces.length).toBeGreaterThan(2)
    expect(result.text).toBe(pieces.join(''))
    expect(result).toMatchObject({ finishReason: 'length', usage: { completionTokens: 24 } })
    const models = await f.app.models.list()
    const direct = await f.app.chat.complete(
      { modelId: models.find((m) => m.name === MODEL)?.id ?? null, input: { messages: CHAT.messages }, maxTokens: 24, temperature: 0, topP: 1, seed: null, stopStrings: [] },
      () => undefined,
      new AbortController().signal
    )
    expect(result.text).toBe(direct.text)
    await expect(listRemoteModels({ ...server, apiKey: 'wrong-key-0123456789' })).rejects.toThrow(/refused the key \(HTTP 401\)/)
  })

  it('a server that stalls, drops the stream, errors or is not there: a clear RemoteError each, the text so far delivered', async () => {
    const server = { baseUrl: flaky.url, apiKey: 'k' }
    const cases: [FlakyBehaviour, RegExp][] = [
      ['stall', /stopped sending for 0\.3 s after 9 characters/],
      ['drop', /dropped after 16 characters/],
      ['error-frame', /stopped with an error: model unloaded/],
      ['error-500', /answered HTTP 500: CUDA out of memory/],
      ['refuse-key', /refused the key \(HTTP 401\): Invalid API key provided/]
    ]
    for (const [b, message] of cases) {
      flaky.behaviour = b
      let seen = ''
      await expect(streamRemoteChat(server, CHAT, (t) => (seen += t), { stallMs: 300 })).rejects.toThrow(message)
      if (b === 'drop') expect(seen).toBe('Once upon a time')
    }
    await expect(listRemoteModels({ baseUrl: 'http://127.0.0.1:1/v1', apiKey: null })).rejects.toThrow(/Could not reach 127\.0\.0\.1:1/)
  })
})
