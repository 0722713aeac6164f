/**
 * The API host without a transport: every channel's arguments validated against the contract (malformed
 * input is a ValidationError, never an exception), conversation CRUD, search and settings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_METHODS, API_LIMITS, type Conversation, type ConversationDetail, type ConversationSummary, type SearchHit, type Settings } from '../../preload/api'
import { API_VALIDATORS } from '../../main/services'
import { appFixture, CHAT_MODEL, streamCall, type AppFixture } from './app-fixture'

let f: AppFixture
beforeAll(() => {
  f = appFixture()
})
afterAll(() => f.dispose())

describe('validation', () => {
  it('has a validator for every channel of the contract, and nothing else', () => {
    expect(Object.keys(API_VALIDATORS).sort()).toEqual(Object.keys(API_METHODS).sort())
  })

  it('answers an unknown channel with UnknownMethodError', async () => {
    expect(await f.call('conversations:drop')).toMatchObject({ ok: false, error: { name: 'UnknownMethodError' } })
    expect(await f.call('__proto__')).toMatchObject({ ok: false, error: { name: 'UnknownMethodError' } })
    expect(await f.call('toString')).toMatchObject({ ok: false, error: { name: 'UnknownMethodError' } })
  })

  const BAD: Array<[string, unknown[], RegExp]> = [
    ['conversations:get', [], /arguments: expected 1 entry, got 0/],
    ['conversations:get', [42], /id: expected a string, got 42/],
    ['conversations:get', ['a', 'b'], /arguments: expected 1 entry, got 2/],
    ['conversations:get', ['x'.repeat(API_LIMITS.maxIdChars + 1)], /more than the limit of/],
    ['conversations:create', [null], /init: expected an object, got null/],
    ['conversations:create', [{ titel: 'typo' }], /unknown field "titel"/],
    ['conversations:create', [{ title: 'x'.repeat(API_LIMITS.maxTitleChars + 1) }], /init\.title: 501 characters is more than the limit/],
    ['conversations:update', ['id', { sampling: { temperature: -1, topP: 1, maxTokens: 5 } }], /temperature: -1 is out of range \[0, 2\]/],
    ['conversations:update', ['id', { sampling: { temperature: 1, topP: 1, maxTokens: 1.5 } }], /maxTokens: expected an integer, got 1\.5/],
    ['conversations:update', ['id', { sampling: { temperature: 1, topP: 0, maxTokens: 5 } }], /topP/],
    ['conversations:update', ['id', { sampling: { temperature: 1, topP: 1 } }], /maxTokens/],
    ['conversations:update', ['id', { modelId: 7 }], /modelId: expected a string, got 7/],
    ['conversations:search', ['q'.repeat(API_LIMITS.maxSearchChars + 1)], /query: \d+ characters is more than the limit/],
    ['conversations:export', [], /arguments: expected 2 entries, got 0/],
    ['conversations:export', [null], /arguments: expected 2 entries, got 1/],
    ['conversations:export', [null, 'pdf'], /format: "pdf" is not one of markdown, json/],
    ['conversations:export', ['an-id', 'json'], /ids: expected an array, got "an-id"/],
    ['conversations:export', [[''], 'json'], /ids\[0\] must be a non-empty id/],
    ['conversations:export', [['ok', 7], 'markdown'], /ids\[1\]: expected a string, got 7/],
    ['conversations:export', [Array.from({ length: API_LIMITS.maxExportIds + 1 }, () => 'id'), 'json'], /ids: 10001 entries is more than the limit of 10000/],
    ['conversations:import', [], /arguments: expected 1 entry, got 0/],
    ['conversations:import', [{ format: 'tandem-conversations' }], /json: expected a string, got an object/],
    ['conversations:import', ['{}', 'extra'], /arguments: expected 1 entry, got 2/],
    ['models:addFolder', ['a\u0000b'], /non-empty path/],
    ['models:addFolder', [''], /non-empty path/],
    ['models:addFile', [''], /non-empty path/],
    ['models:addFile', [7], /path: expected a string, got 7/],
    ['models:addFile', ['a', 'b'], /arguments: expected 1 entry, got 2/],
    ['models:remove', [null], /modelId: expected a string, got null/],
    ['models:remove', ['x'.repeat(API_LIMITS.maxPathChars + 1)], /modelId: \d+ characters is more than the limit/],
    ['models:catalog', ['extra'], /arguments: expected 0 entries, got 1/],
    ['models:download', ['tiny'], /request: expected an object, got "tiny"/],
    ['models:download', [{ requestId: 'r' }], /request\.catalogId: expected a string, got nothing/],
    ['models:download', [{ requestId: 'r', catalogId: '../../etc' }], /request\.catalogId must be a catalog id/],
    ['models:download', [{ requestId: 'r', catalogId: 'tiny', extra: 1 }], /unknown field "extra"/],
    ['models:download', [{ requestId: '', catalogId: 'tiny' }], /requestId must be a non-empty id/],
    ['models:pauseDownload', [], /arguments: expected 1 entry, got 0/],
    ['models:pauseDownload', ['Tiny Model'], /catalogId must be a catalog id/],
    ['chat:send', [{ requestId: 'r', conversationId: 'c' }], /content: expected a string, got nothing/],
    ['chat:send', [{ requestId: '', conversationId: 'c', content: 'hi' }], /requestId must be a non-empty id/],
    ['chat:send', [{ requestId: 'r', conversationId: 'c', content: 'x'.repeat(API_LIMITS.maxMessageChars + 1) }], /more than the limit of 1000000/],
    ['chat:edit', [{ requestId: 'r', conversationId: 'c', content: 'hi' }], /messageId/],
    ['chat:stop', [{}], /requestId: expected a string, got an object/],
    ['summaries:start', [{ requestId: 'r', fileName: 'a.txt', data: 'aGk=' }], /reuse/],
    ['summaries:start', [{ requestId: 'r', fileName: ' ', data: 'aGk=', reuse: true }], /fileName must not be empty/],
    ['summaries:start', [{ requestId: 'r', fileName: 'a.txt', data: 'aGk', reuse: true }], /data must be base64/],
    ['summaries:start', [{ requestId: 'r', fileName: 'a.txt', data: 'a$k=', reuse: true }], /data must be base64/],
    ['summaries:start', [{ requestId: 'r', fileName: 'a.txt', data: 42, reuse: true }], /data: expected a string/],
    ['summaries:start', [{ requestId: 'r', fileName: 'x'.repeat(API_LIMITS.maxFileNameChars + 1), data: 'aGk=', reuse: true }], /fileName: \d+ characters is more than the limit/],
    ['settings:update', [{ theme: 'neon' }], /theme: "neon" is not one of system, light, dark/],
    ['settings:update', [[]], /patch: expected an object, got an array/],
    ['settings:update', [{ npuQuantization: { w8a8: 'yes', shadowPrunedPercent: 85 } }], /patch.npuQuantization.w8a8 must be true or false/],
    ['settings:update', [{ npuQuantization: { w8a8: true, shadowPrunedPercent: 101 } }], /shadowPrunedPercent: 101 is out of range \[0, 100\]/],
    ['settings:update', [{ npuQuantization: { w8a8: true } }], /missing field "shadowPrunedPercent"|shadowPrunedPercent/],
    ['settings:update', [{ kvSnapshotBudgetBytes: -1 }], /kvSnapshotBudgetBytes: -1 is out of range/],
    ['settings:update', [{ kvSnapshotBudgetBytes: 1.5 }], /kvSnapshotBudgetBytes: expected an integer/],
    ['settings:setLocalApi', [{ enabled: 'yes', port: 8391 }], /patch\.enabled: expected true or false/],
    ['settings:setLocalApi', [{ enabled: true, port: 80 }], /patch\.port: 80 is out of range \[1024, 65535\]/],
    ['settings:setLocalApi', [{ enabled: true }], /port/],
    ['models:list', ['extra'], /arguments: expected 0 entries, got 1/]
  ]
  it.each(BAD)('%s %j is a ValidationError', async (channel, args, message) => {
    const outcome = await f.call(channel, ...args)
    expect(outcome).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(message) } })
    if (!outcome.ok) expect(outcome.error.message.startsWith(`${channel}: `)).toBe(true)
  })

  it('never throws on garbage, whatever the channel', async () => {
    const garbage: unknown[] = [undefined, null, 0, NaN, 'x', [], {}, [null], [[]], [{}], [1, 2, 3], [{ requestId: {} }], 'args', [Symbol.iterator.toString()]]
    for (const channel of Object.keys(API_METHODS)) {
      for (const args of garbage) {
        const outcome = await f.app.dispatch(channel, args, { emit: () => undefined, signal: new AbortController().signal })
        expect(typeof outcome.ok).toBe('boolean')
        if (!outcome.ok) expect(typeof outcome.error.message).toBe('string')
      }
    }
  })
})

describe('conversations', () => {
  it('create, list, get, update, remove, restore', async () => {
    const created = await f.ok<Conversation>('conversations:create', { title: 'Plans', systemPrompt: 'Be brief.' })
    // defaults from the settings
    expect(created).toMatchObject({ title: 'Plans', systemPrompt: 'Be brief.', modelId: null, sampling: { temperature: 0.7, topP: 0.95, maxTokens: 256 } })
    expect((await f.ok<ConversationSummary[]>('conversations:list')).map((c) => c.id)).toContain(created.id)
    const updated = await f.ok<Conversation>('conversations:update', created.id, {
      title: 'Trip plans',
      modelId: CHAT_MODEL(),
      sampling: { temperature: 0, topP: 1, maxTokens: 8 }
    })
    expect(updated).toMatchObject({ id: created.id, title: 'Trip plans', systemPrompt: 'Be brief.', modelId: CHAT_MODEL(), sampling: { temperature: 0, topP: 1, maxTokens: 8 } })
    expect(await f.ok<ConversationDetail>('conversations:get', created.id)).toEqual({ conversation: updated, messages: [], document: null })

    expect(await f.call('conversations:remove', created.id)).toEqual({ ok: true, result: null })
    expect((await f.ok<ConversationSummary[]>('conversations:list')).map((c) => c.id)).not.toContain(created.id)
    expect(await f.call('conversations:get', created.id)).toMatchObject({ ok: false, error: { name: 'NotFoundError', message: expect.stringMatching(/deleted/) } })
    expect(await f.ok<Conversation>('conversations:restore', created.id)).toMatchObject({ id: created.id, title: 'Trip plans' })
    expect((await f.ok<ConversationSummary[]>('conversations:list')).map((c) => c.id)).toContain(created.id)
  })

  it('unknown ids are NotFoundError', async () => {
    for (const channel of ['conversations:get', 'conversations:remove', 'conversations:restore']) {
      expect(await f.call(channel, 'no-such-id')).toMatchObject({ ok: false, error: { name: 'NotFoundError' } })
    }
    expect(await f.call('conversations:update', 'no-such-id', { title: 'x' })).toMatchObject({ ok: false, error: { name: 'NotFoundError' } })
    const { outcome } = await streamCall(f.app, 'chat:send', { requestId: 'nf', conversationId: 'no-such-id', content: 'hi' })
    expect(outcome).toMatchObject({ ok: false, error: { name: 'NotFoundError' } })
  })

  it('searches titles and messages, with plain-text snippets', async () => {
    const c = await f.ok<Conversation>('conversations:create', { title: 'Zebra facts', modelId: CHAT_MODEL(), sampling: { temperature: 0, topP: 1, maxTokens: 4 } })
    await streamCall(f.app, 'chat:send', { requestId: 'search-1', conversationId: c.id, content: 'A giraffe walked into town' })
    const byTitle = await f.ok<SearchHit[]>('conversations:search', 'zebra')
    expect(byTitle).toEqual([{ conversationId: c.id, title: 'Zebra facts', messageId: null, snippet: 'Zebra facts' }])
    const byMessage = await f.ok<SearchHit[]>('conversations:search', 'giraffe')
    expect(byMessage).toHaveLength(1)
    expect(byMessage[0]).toMatchObject({ conversationId: c.id, messageId: expect.any(String), snippet: expect.stringContaining('giraffe') })
  })
})

describe('settings', () => {
  it('has defaults, applies validated patches, and keeps them', async () => {
    const s = await f.ok<Settings>('settings:get')
    expect(s).toEqual({ modelFolders: [], modelFiles: [], defaultModelId: null, theme: 'system', sampling: { temperature: 0.7, topP: 0.95, maxTokens: 256 }, npuQuantization: { w8a8: false, shadowPrunedPercent: 85 }, kvSnapshotBudgetBytes: 2 * 1024 ** 3 })
    const next = await f.ok<Settings>('settings:update', { theme: 'dark', defaultModelId: CHAT_MODEL(), sampling: { temperature: 1.2, topP: 0.9, maxTokens: 64 } })
    expect(next).toMatchObject({ theme: 'dark', defaultModelId: CHAT_MODEL(), sampling: { temperature: 1.2, topP: 0.9, maxTokens: 64 } })
    // new conversations take the new defaults
    expect(await f.ok<Conversation>('conversations:create', {})).toMatchObject({ modelId: CHAT_MODEL(), sampling: { temperature: 1.2, maxTokens: 64 } })
    await f.ok('settings:update', { theme: 'system', defaultModelId: null, sampling: { temperature: 0.7, topP: 0.95, maxTokens: 256 } })
    expect((await f.ok<Settings>('settings:update', { npuQuantization: { w8a8: true, shadowPrunedPercent: 50 } })).npuQuantization).toEqual({ w8a8: true, shadowPrunedPercent: 50 })
    expect((await f.ok<Settings>('settings:get')).npuQuantization).toEqual({ w8a8: true, shadowPrunedPercent: 50 })
    await f.ok('settings:update', { npuQuantization: { w8a8: false, shadowPrunedPercent: 85 } })
    // the KV snapshot budget, the space used (earlier replies in this file may have saved some) and clearing
    expect(await f.ok('settings:kvSnapshots')).toMatchObject({ bytes: expect.any(Number), blocks: expect.any(Number), budgetBytes: 2 * 1024 ** 3 })
    expect((await f.ok<Settings>('settings:update', { kvSnapshotBudgetBytes: 0 })).kvSnapshotBudgetBytes).toBe(0)
    expect(await f.ok('settings:clearKvSnapshots')).toEqual({ bytes: 0, blocks: 0, budgetBytes: 0 })
    await f.ok('settings:update', { kvSnapshotBudgetBytes: 2 * 1024 ** 3 })
  })

  it('reports the app version', async () => {
    expect(await f.ok('app:version')).toBe('9.9.9-test')
  })
})
