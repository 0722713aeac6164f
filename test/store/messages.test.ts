/** @file MessageStore on a real file: append order, streaming rewrites, patches, deleteAfter, stats, huge content. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { StoreNotFoundError, type MessageStats } from '../../main/store'
import { storeFixture, type StoreFixture } from './fixture'

let f: StoreFixture
beforeEach(() => {
  f = storeFixture()
})
afterEach(() => f.dispose())

const STATS: MessageStats = {
  ttftMs: 123.5,
  prefillTokensPerSec: 812.25,
  decodeTokensPerSec: 41.75,
  promptTokens: 37,
  generatedTokens: 200,
  model: 'stories260K',
  devices: ['webgpu', 'cpu']
}

/** Deterministic text of `length` UTF-16 units mixing ASCII, accents, CJK, emoji (surrogate pairs) and newlines. */
function bigText(length: number, seed: number): string {
  const pieces = ['lorem ', 'ipsum\n', 'café ', '日本語 ', '🙂', '"quoted" ', "it's ", '\t', 'Ω≈ç√ ']
  let out = ''
  let x = seed
  while (out.length < length) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0
    out += pieces[x % pieces.length]
  }
  // Cut at a whole code point so the string stays valid UTF-16.
  out = out.slice(0, length)
  return /[\uD800-\uDBFF]$/.test(out) ? out.slice(0, -1) + 'x' : out
}

describe('MessageStore', () => {
  it('appends in seq order per conversation and lists in that order', () => {
    const { conversations, messages } = f.store
    const a = conversations.create()
    const b = conversations.create()
    const m0 = messages.append({ conversationId: a.id, role: 'system', content: 'sys' })
    const m1 = messages.append({ conversationId: a.id, role: 'user', content: 'hi' })
    const other = messages.append({ conversationId: b.id, role: 'user', content: 'elsewhere' })
    const m2 = messages.append({ conversationId: a.id, role: 'assistant', content: 'hello', stats: STATS })
    expect([m0.seq, m1.seq, m2.seq, other.seq]).toEqual([0, 1, 2, 0])
    expect(messages.list(a.id).map((m) => m.id)).toEqual([m0.id, m1.id, m2.id])
    expect(m2).toEqual({
      id: m2.id,
      conversationId: a.id,
      seq: 2,
      role: 'assistant',
      content: 'hello',
      status: 'complete',
      error: null,
      createdAtMs: f.clock.now(),
      updatedAtMs: f.clock.now(),
      stats: STATS
    })
    expect(messages.get(m2.id)).toEqual(m2)
    expect(messages.get('nope')).toBeUndefined()
    expect(messages.list('nope')).toEqual([])
    expect(() => messages.append({ conversationId: 'nope', role: 'user' })).toThrow(StoreNotFoundError)
  })

  it('streams with setContent (each call replaces the whole text), then finishes with update (status, stats, error)', () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    const reply = messages.append({ conversationId: c.id, role: 'assistant', status: 'streaming' })
    expect(reply.content).toBe('')
    const tokens = ['Once', ' upon', ' a', ' time', ' 🙂', '\n']
    let text = ''
    for (const t of tokens) {
      f.clock.advance(1)
      text += t
      messages.setContent(reply.id, text)
      expect(messages.get(reply.id)).toMatchObject({ content: text, status: 'streaming', updatedAtMs: f.clock.now() })
    }
    expect(messages.list(c.id)[0].content).toBe(tokens.join(''))
    // the saved text is whatever was passed last, shorter or not
    messages.setContent(reply.id, 'Once upon a')
    expect(messages.get(reply.id)?.content).toBe('Once upon a')

    f.clock.advance(10)
    const done = messages.update(reply.id, { content: 'Once upon a time', status: 'complete', stats: STATS })
    expect(done).toMatchObject({ status: 'complete', stats: STATS, content: 'Once upon a time', error: null })
    expect(done.updatedAtMs).toBe(f.clock.now())
    expect(f.store.conversations.get(c.id)?.updatedAtMs).toBe(f.clock.now())

    // a patch without content keeps the saved text
    const failed = messages.update(reply.id, { status: 'error', error: 'device lost' })
    expect(failed).toMatchObject({ status: 'error', error: 'device lost', stats: STATS, content: 'Once upon a time' })
    expect(messages.update(reply.id, { error: null, stats: null })).toMatchObject({ status: 'error', error: null, stats: null })

    expect(() => messages.setContent('nope', 'x')).toThrow(StoreNotFoundError)
    expect(() => messages.update('nope', { status: 'complete' })).toThrow(StoreNotFoundError)
  })

  it('refuses stats with non-finite numbers and reads corrupt stats_json as null', () => {
    const { conversations, messages, db } = f.store
    const c = conversations.create()
    expect(() => messages.append({ conversationId: c.id, role: 'assistant', stats: { ...STATS, ttftMs: Number.NaN } })).toThrow(
      /ttftMs must be a finite number/
    )
    expect(messages.list(c.id)).toEqual([])
    const m = messages.append({ conversationId: c.id, role: 'assistant', stats: STATS })
    const setRaw = db.prepare('UPDATE messages SET stats_json = ? WHERE id = ?')
    setRaw.run('{"ttftMs": "fast"}', m.id)
    expect(messages.get(m.id)?.stats).toBeNull()
    setRaw.run(JSON.stringify({ ...STATS, devices: 'cpu' }), m.id)
    expect(messages.get(m.id)?.stats).toBeNull()
    db.pragma('ignore_check_constraints = ON')
    setRaw.run('{truncated', m.id)
    db.pragma('ignore_check_constraints = OFF')
    expect(messages.get(m.id)).toMatchObject({ stats: null, content: '' })
  })

  it('deleteAfter removes later messages only (regenerate / edit) and appends continue after the kept ones', () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    const other = conversations.create()
    const ids = ['u0', 'a1', 'u2', 'a3'].map((content, i) =>
      messages.append({ conversationId: c.id, role: i % 2 === 0 ? 'user' : 'assistant', content }).id
    )
    messages.append({ conversationId: other.id, role: 'user', content: 'untouched' })
    expect(messages.deleteAfter(c.id, 1)).toBe(2)
    expect(messages.list(c.id).map((m) => m.id)).toEqual(ids.slice(0, 2))
    expect(messages.deleteAfter(c.id, 1)).toBe(0)
    expect(messages.append({ conversationId: c.id, role: 'user', content: 'edited' }).seq).toBe(2)
    expect(messages.list(other.id)).toHaveLength(1)
    expect(messages.deleteAfter(c.id, -1)).toBe(3)
    expect(() => messages.deleteAfter(c.id, 0.5)).toThrow(RangeError)
  })

  it('markInterrupted turns leftover streaming messages into stopped ones, keeping the last saved text', () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    const a = messages.append({ conversationId: c.id, role: 'assistant', status: 'streaming', content: 'half' })
    messages.setContent(a.id, 'half a rep')
    const b = messages.append({ conversationId: c.id, role: 'user', content: 'done' })
    const again = f.reopen()
    expect(again.messages.get(a.id)).toMatchObject({ status: 'streaming', content: 'half a rep' })
    f.clock.advance(5)
    expect(again.messages.markInterrupted()).toBe(1)
    expect(again.messages.get(a.id)).toMatchObject({ status: 'stopped', content: 'half a rep', updatedAtMs: f.clock.now() })
    expect(again.messages.get(b.id)?.status).toBe('complete')
    expect(again.messages.markInterrupted()).toBe(0)
  })

  it('rejects roles and statuses outside the schema', () => {
    const { conversations, messages, db } = f.store
    const c = conversations.create()
    const m = messages.append({ conversationId: c.id, role: 'user' })
    expect(() => db.prepare("UPDATE messages SET role = 'tool' WHERE id = ?").run(m.id)).toThrow(/CHECK constraint failed/)
    expect(() => db.prepare("UPDATE messages SET status = 'done' WHERE id = ?").run(m.id)).toThrow(/CHECK constraint failed/)
  })

  it('stores and reads back huge content intact: 200,000 characters and a few MB, also built by streaming', () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    const big = bigText(200_000, 1)
    const huge = bigText(2 * 1024 * 1024, 2) // 2 Mi UTF-16 units, ~2.8 MB as UTF-8
    const m1 = messages.append({ conversationId: c.id, role: 'user', content: big })
    const m2 = messages.append({ conversationId: c.id, role: 'assistant', content: huge })
    // streamed the way the chat service saves a reply: the growing text rewritten whole, then finished
    const streamed = messages.append({ conversationId: c.id, role: 'assistant', status: 'streaming' })
    for (let end = 20_000; end <= big.length; end += 20_000) messages.setContent(streamed.id, big.slice(0, end))
    messages.update(streamed.id, { status: 'complete' })

    const again = f.reopen()
    const read = again.messages.list(c.id)
    expect(read.map((m) => m.id)).toEqual([m1.id, m2.id, streamed.id])
    expect(read[0].content.length).toBe(200_000)
    expect(read[0].content === big).toBe(true)
    expect(read[1].content === huge).toBe(true)
    expect(read[2].content === big).toBe(true)
    expect(again.db.pragma('integrity_check', { simple: true })).toBe('ok')
  })
})
