/**
 * Chat through the services' dispatcher with the real engine: stories260K (no chat template, so the
 * plain-prompt fallback) in its worker, a real SQLite file. Small reply budgets keep it quick.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PERSIST_INTERVAL_MS } from '../../main/services'
import type { Message as StoredMessage } from '../../main/store'
import type { ChatEvent, ConversationDetail, Message } from '../../preload/api'
import { tempDir } from '../helpers/paths'
import { appFixture, CHAT_MODEL, paceGate, streamCall, type AppFixture } from './app-fixture'

let f: AppFixture
beforeAll(() => {
  f = appFixture()
})
afterAll(() => f.dispose())

const deltas = (events: ChatEvent[]): string[] => events.flatMap((e) => (e.type === 'delta' ? [e.text] : []))
let nextId = 0
const requestId = (): string => `req-${++nextId}`

describe('chat:send', () => {
  it('stores the user message, streams the reply in steps, and stores it complete with stats', async () => {
    const conv = await f.conversation(24)
    const { outcome, events } = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' })
    expect(outcome.ok).toBe(true)
    const reply = outcome.ok ? (outcome.result as Message) : null
    expect(events[0]).toMatchObject({ type: 'started', userMessage: { role: 'user', content: 'Once upon a time' }, assistantMessage: { status: 'streaming', content: '' } })
    const steps = deltas(events)
    expect(steps.length).toBeGreaterThanOrEqual(2)
    expect(reply).toMatchObject({ role: 'assistant', status: 'complete', content: steps.join(''), error: null })
    // the fixture's graph cache starts empty: the model's first open says what it is doing, all before the first text
    const loading = events.flatMap((e, i) => (e.type === 'loading' ? [{ ...e, at: i }] : []))
    expect([...new Set(loading.map((e) => e.progress.stage))]).toEqual(['compiling', 'reading', 'preparing'])
    expect(loading.every((e) => e.messageId === reply?.id && e.at < events.findIndex((x) => x.type === 'delta'))).toBe(true)
    // the model is open now: the next reply starts without loading
    const again = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'And then' })
    expect(again.events.filter((e) => e.type === 'loading')).toEqual([])
    expect(reply?.content.length).toBeGreaterThan(10)
    const detail = await f.ok<ConversationDetail>('conversations:get', conv.id)
    expect(detail.messages.map((m) => [m.role, m.status])).toEqual([['user', 'complete'], ['assistant', 'complete'], ['user', 'complete'], ['assistant', 'complete']])
    const stored = detail.messages[1]
    expect(stored.content).toBe(reply?.content)
    expect(stored.stats).toMatchObject({ model: 'stories260K.bin', devices: [expect.stringMatching(/^CPU \(/)], generatedTokens: 24 })
    expect(stored.stats?.deviceBusy).toEqual([{ id: 'cpu', name: stored.stats?.devices[0], busyMs: expect.any(Number) }])
    expect(stored.stats?.promptTokens).toBeGreaterThan(1)
    expect(stored.stats?.ttftMs).toBeGreaterThan(0)
    expect(stored.stats?.decodeTokensPerSec).toBeGreaterThan(0)
    // an untitled conversation takes its title from the first message
    expect(detail.conversation.title).toBe('Once upon a time')
  })

  it('stop mid-stream keeps the partial reply as stopped', async () => {
    const conv = await f.conversation(400)
    const id = requestId()
    let stopped: Promise<unknown> | null = null
    const { outcome, events } = await streamCall(f.app, 'chat:send', { requestId: id, conversationId: conv.id, content: 'Once upon a time' }, (_e, all) => {
      if (stopped === null && deltas(all).length >= 3) stopped = f.ok('chat:stop', id)
    })
    expect(await stopped).toBe(true)
    const reply = outcome.ok ? (outcome.result as Message) : null
    expect(reply?.status).toBe('stopped')
    expect(reply?.content.length).toBeGreaterThan(0)
    expect(reply?.stats?.generatedTokens).toBeLessThan(400)
    const stored = (await f.ok<ConversationDetail>('conversations:get', conv.id)).messages[1]
    expect(stored).toMatchObject({ status: 'stopped', content: reply?.content })
    expect(deltas(events).join('')).toBe(reply?.content)
    // stopping a finished request says so
    expect(await f.ok('chat:stop', id)).toBe(false)
  })

  it('an aborted caller (window closed, client gone) stops the generation', async () => {
    const conv = await f.conversation(400)
    const controller = new AbortController()
    const { outcome } = await streamCall(
      f.app,
      'chat:send',
      { requestId: requestId(), conversationId: conv.id, content: 'The dog' },
      (_e, all) => {
        if (deltas(all).length === 2) controller.abort()
      },
      controller.signal
    )
    expect(outcome.ok && (outcome.result as Message).status).toBe('stopped')
  })

  it('saves the streaming reply to the database while it grows, once per PERSIST_INTERVAL_MS of its clock', async () => {
    // The test moves the service's clock a fixed step per streamed delta, so which deltas are followed by a
    // write depends on that clock alone, not on how fast this machine generates.
    let clockMs = 0
    const g = appFixture({ monotonicMs: () => clockMs })
    try {
      const conv = await g.conversation(150)
      const stepMs = 30
      const writeEvery = Math.ceil(PERSIST_INTERVAL_MS / stepMs)
      const steps: string[] = []
      const saved: (StoredMessage | undefined)[] = []
      const { outcome } = await streamCall(g.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' }, (e) => {
        if (e.type !== 'delta') return
        // the database as this delta arrives: the service writes (when due) only after emitting it
        saved.push(g.app.store.messages.get(e.messageId))
        steps.push(e.text)
        clockMs += stepMs
      })
      const final = outcome.ok ? (outcome.result as Message) : null
      expect(final?.status).toBe('complete')
      expect(steps.join('')).toBe(final?.content)
      // several throttled writes while streaming, each the whole text so far; then the final one
      expect(steps.length).toBeGreaterThan(3 * writeEvery)
      saved.forEach((m, k) => {
        const written = Math.floor(k / writeEvery) * writeEvery
        expect(m, `row as delta ${k} arrives`).toMatchObject({ status: 'streaming', content: steps.slice(0, written).join('') })
      })
    } finally {
      await g.dispose()
    }
  })

  it('waits on its pace before each token after the first: the reply holds still until let through, and stop ends it there', async () => {
    const gate = paceGate()
    const g = appFixture({ pace: gate.pace })
    try {
      const conv = await g.conversation(400)
      const id = requestId()
      const reply = streamCall(g.app, 'chat:send', { requestId: id, conversationId: conv.id, content: 'Once upon a time' })
      // held before the second token
      await gate.calls(1)
      const held = g.app.store.messages.list(conv.id)[1]
      expect(held.status).toBe('streaming')
      // let two more tokens through: the generation is held again before the fourth
      gate.release(2)
      await gate.calls(3)
      expect(await g.ok('chat:stop', id)).toBe(true)
      const { outcome, events } = await reply
      const message = outcome.ok ? (outcome.result as Message) : null
      expect(message).toMatchObject({ status: 'stopped', stats: { generatedTokens: 3 } })
      expect(deltas(events).join('')).toBe(message?.content)
      expect(gate.count()).toBe(3)
    } finally {
      await g.dispose()
    }
  })

  it('refuses an empty or blank message and stores nothing', async () => {
    const conv = await f.conversation()
    for (const content of ['', '   \n\t ']) {
      const { outcome, events } = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content })
      expect(outcome).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(/empty/) } })
      expect(events).toEqual([])
    }
    expect((await f.ok<ConversationDetail>('conversations:get', conv.id)).messages).toEqual([])
  })

  it('a 200,000-character message is a clear error stored on the reply, and the text is kept', async () => {
    const conv = await f.conversation()
    const content = 'The little dog ran to the park. '.repeat(6250)
    expect(content.length).toBe(200_000)
    const { outcome } = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content })
    // refused from a lower bound on the token count ("at least"), without tokenizing 200k characters
    expect(outcome).toMatchObject({ ok: false, error: { name: 'ContextOverflowError', message: expect.stringMatching(/too long.*needs at least \d+ tokens.*context holds 512/s) } })
    const messages = (await f.ok<ConversationDetail>('conversations:get', conv.id)).messages
    expect(messages).toHaveLength(2)
    expect(messages[0]).toMatchObject({ role: 'user', status: 'complete' })
    expect(messages[0].content).toBe(content)
    expect(messages[1]).toMatchObject({ role: 'assistant', status: 'error', error: expect.stringMatching(/too long/) })
  })

  it('a second request in a busy conversation is refused; other conversations queue', async () => {
    const a = await f.conversation(60)
    const b = await f.conversation(8)
    const first = streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: a.id, content: 'Once' })
    const busy = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: a.id, content: 'Twice' })
    expect(busy.outcome).toMatchObject({ ok: false, error: { name: 'BusyError' } })
    const other = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: b.id, content: 'A cat' })
    expect(other.outcome.ok).toBe(true)
    expect((await first).outcome.ok).toBe(true)
    expect((await f.ok<ConversationDetail>('conversations:get', a.id)).messages).toHaveLength(2)
  })
})

describe('chat:regenerate and chat:edit', () => {
  it('regenerate drops the last reply and answers again', async () => {
    const conv = await f.conversation(12)
    await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' })
    const before = (await f.ok<ConversationDetail>('conversations:get', conv.id)).messages
    const { outcome, events } = await streamCall(f.app, 'chat:regenerate', { requestId: requestId(), conversationId: conv.id })
    expect(outcome.ok).toBe(true)
    expect(events[0]).toMatchObject({ type: 'started', userMessage: null })
    const after = (await f.ok<ConversationDetail>('conversations:get', conv.id)).messages
    expect(after).toHaveLength(2)
    expect(after[0].id).toBe(before[0].id)
    expect(after[1].id).not.toBe(before[1].id)
    expect(after[1]).toMatchObject({ status: 'complete', role: 'assistant' })
    // temperature 0: the same prompt gives the same greedy reply
    expect(after[1].content).toBe(before[1].content)
  })

  it('regenerate in an empty conversation is a clear error', async () => {
    const conv = await f.conversation()
    const { outcome } = await streamCall(f.app, 'chat:regenerate', { requestId: requestId(), conversationId: conv.id })
    expect(outcome).toMatchObject({ ok: false, error: { name: 'ValidationError' } })
  })

  it('edit replaces a user message, drops what followed, and answers it', async () => {
    const conv = await f.conversation(10)
    await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' })
    await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'The cat' })
    const before = (await f.ok<ConversationDetail>('conversations:get', conv.id)).messages
    expect(before).toHaveLength(4)
    const { outcome, events } = await streamCall(f.app, 'chat:edit', {
      requestId: requestId(),
      conversationId: conv.id,
      messageId: before[0].id,
      content: 'A big dog'
    })
    expect(outcome.ok).toBe(true)
    expect(events[0]).toMatchObject({ type: 'started', userMessage: { id: before[0].id, content: 'A big dog' } })
    const after = (await f.ok<ConversationDetail>('conversations:get', conv.id)).messages
    expect(after.map((m) => [m.role, m.content.length > 0])).toEqual([['user', true], ['assistant', true]])
    expect(after[0]).toMatchObject({ id: before[0].id, content: 'A big dog' })
    // editing an assistant message is refused
    const bad = await streamCall(f.app, 'chat:edit', { requestId: requestId(), conversationId: conv.id, messageId: after[1].id, content: 'x' })
    expect(bad.outcome).toMatchObject({ ok: false, error: { name: 'ValidationError' } })
  })
})

describe('no model', () => {
  it('tells the user to add a models folder, keeping the message', async () => {
    const scratch = tempDir('tandem-nomodel-')
    const g = appFixture({ modelDirs: [scratch.dir] })
    try {
      const conv = await g.ok<{ id: string }>('conversations:create', {})
      const { outcome } = await streamCall(g.app, 'chat:send', { requestId: 'r', conversationId: conv.id, content: 'Hello' })
      expect(outcome).toMatchObject({ ok: false, error: { name: 'NoModelError', message: expect.stringMatching(/Settings/) } })
      const messages = (await g.ok<ConversationDetail>('conversations:get', conv.id)).messages
      expect(messages.map((m) => [m.role, m.status])).toEqual([['user', 'complete'], ['assistant', 'error']])
      // a conversation pinned to a model that is gone
      await g.ok('conversations:update', conv.id, { modelId: CHAT_MODEL() })
      const again = await streamCall(g.app, 'chat:regenerate', { requestId: 'r2', conversationId: conv.id })
      expect(again.outcome).toMatchObject({ ok: false, error: { name: 'NoModelError', message: expect.stringMatching(/not available/) } })
    } finally {
      await g.dispose()
      scratch.dispose()
    }
  })
})
