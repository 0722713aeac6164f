/**
 * @file A search typed while a reply streams (issue 10, item 2): the search over a 1,000,000-character
 * message is answered off the main thread, so the event loop — which carries the reply's tokens, IPC and
 * every other call — keeps turning while it runs, and the reply streams on. Asserted by counting turns of
 * the event loop, never by time.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { API_LIMITS, type ChatEvent, type Message, type SearchHit } from '../../preload/api'
import { turnsWhile } from '../helpers/event-loop'
import { appFixture, paceGate, streamCall, type AppFixture } from './app-fixture'

let g: AppFixture | null = null
afterEach(async () => {
  await g?.dispose()
  g = null
})

describe('search while a reply streams', () => {
  it('leaves the event loop turning and the reply streaming', async () => {
    const gate = paceGate()
    const app = appFixture({ pace: gate.pace })
    g = app
    const hay = app.app.store.conversations.create({ title: 'haystack' })
    const huge = 'alpha beta gamma needle delta '.repeat(API_LIMITS.maxMessageChars / 30).slice(0, API_LIMITS.maxMessageChars)
    const big = app.app.store.messages.append({ conversationId: hay.id, role: 'user', content: huge })

    const conv = await app.conversation(400)
    const requestId = 'search-stream-1'
    const reply = streamCall(app.app, 'chat:send', { requestId, conversationId: conv.id, content: 'Once upon a time' })
    await gate.calls(1) // streaming, held before its second token

    const { turns, result: outcome } = await turnsWhile(() => {
      const search = app.call('conversations:search', 'needle')
      gate.release(2)
      return search
    })
    // On the main connection (the old path) the search ran inside the call, before the loop could turn once.
    expect(turns).toBeGreaterThan(0)
    expect(outcome.ok).toBe(true)
    const hits = outcome.ok ? (outcome.result as SearchHit[]) : []
    expect(hits.map((h) => h.messageId)).toEqual([big.id])
    expect(hits[0].snippet.length).toBeLessThan(200)

    // the reply went on: two more tokens let through, then stopped
    await gate.calls(3)
    expect(await app.ok('chat:stop', requestId)).toBe(true)
    const { outcome: done, events } = await reply
    const message = done.ok ? (done.result as Message) : null
    expect(message).toMatchObject({ status: 'stopped', stats: { generatedTokens: 3 } })
    expect(events.flatMap((e: ChatEvent) => (e.type === 'delta' ? [e.text] : [])).join('')).toBe(message?.content)
  })
})
