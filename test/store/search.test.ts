/** @file ConversationStore.search on a real file: title and content hits, snippets, hostile input, index upkeep. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { SearchHit } from '../../main/store'
import { storeFixture, type StoreFixture } from './fixture'

let f: StoreFixture
beforeEach(() => {
  f = storeFixture()
})
afterEach(() => f.dispose())

/** The snippet as text with [brackets] around matches, for readable assertions. */
const marked = (hit: SearchHit): string => hit.snippet.map((p) => (p.match ? `[${p.text}]` : p.text)).join('')

/** Both FTS indexes agree with their content tables (FTS5's own check against external content). */
function checkIndexes(): void {
  f.store.db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")
  f.store.db.exec("INSERT INTO conversations_fts (conversations_fts, rank) VALUES ('integrity-check', 1)")
}

describe('ConversationStore.search', () => {
  it('finds title hits (messageId null) first, then message hits with a snippet', () => {
    const { conversations, messages } = f.store
    const trip = conversations.create({ title: 'Lisbon trip planning' })
    const other = conversations.create({ title: 'Groceries' })
    const m = messages.append({ conversationId: other.id, role: 'user', content: 'Buy sardines before the Lisbon trip, and bread.' })
    messages.append({ conversationId: other.id, role: 'assistant', content: 'Noted.' })

    const hits = f.store.conversations.search('lisbon')
    expect(hits.map((h) => [h.conversationId, h.messageId])).toEqual([
      [trip.id, null],
      [other.id, m.id]
    ])
    expect(marked(hits[0])).toBe('[Lisbon] trip planning')
    expect(hits[1].title).toBe('Groceries')
    expect(marked(hits[1])).toContain('before the [Lisbon] trip')
    expect(conversations.search('lisbon', 1)).toHaveLength(1)
    expect(conversations.search('lisbon', 0)).toEqual([])
  })

  it('matches every word as a prefix, case- and accent-insensitively', () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    const m = messages.append({ conversationId: c.id, role: 'user', content: 'Le Café de Flore serves CROISSANTS' })
    expect(conversations.search('cafe croiss').map((h) => h.messageId)).toEqual([m.id])
    expect(marked(conversations.search('café')[0])).toContain('[Café]')
    expect(conversations.search('cafe tea')).toEqual([]) // all words must occur
  })

  it('treats quotes, operators, SQL and unicode as plain text, never a syntax error', () => {
    const { conversations, messages } = f.store
    const c = conversations.create({ title: 'weird' })
    const quoted = messages.append({ conversationId: c.id, role: 'user', content: 'He said "a" OR b* NEAR(x y) col:val ^start' })
    const sql = messages.append({ conversationId: c.id, role: 'user', content: "Robert'); DROP TABLE messages; --" })
    const emoji = messages.append({ conversationId: c.id, role: 'user', content: 'party 🎉 time, 日本語のテキスト' })

    expect(conversations.search('"a" OR b*').map((h) => h.messageId)).toEqual([quoted.id])
    expect(conversations.search("'; DROP").map((h) => h.messageId)).toEqual([sql.id])
    expect(conversations.search("'); DROP TABLE messages; --").map((h) => h.messageId)).toEqual([sql.id])
    expect(conversations.search('🎉').map((h) => h.messageId)).toEqual([emoji.id])
    expect(conversations.search('日本').map((h) => h.messageId)).toEqual([emoji.id])
    expect(conversations.search('NEAR(x')).toHaveLength(1)
    expect(conversations.search('col:val')).toHaveLength(1)
    for (const empty of ['', '   ', '"', '""', '*', "'", '-- ;', '()', 'AND', '\u0000\u0002']) {
      const hits = conversations.search(empty)
      expect(Array.isArray(hits)).toBe(true)
    }
    expect(conversations.search('')).toEqual([])
    expect(conversations.search("';")).toEqual([])
    expect(f.store.messages.list(c.id)).toHaveLength(3) // still there, of course
  })

  it('survives random hostile input (seeded) without throwing', () => {
    const { conversations, messages } = f.store
    const c = conversations.create({ title: 'fuzz "target" AND more' })
    messages.append({ conversationId: c.id, role: 'user', content: 'a OR b AND NOT c NEAR d "e" f* ^g h:i (j) {k} [l] 🙂 é' })
    const alphabet = [...'"\'*^:(){}[]-+;,.%_\\/ \t\n', 'AND', 'OR', 'NOT', 'NEAR', 'a', 'b', 'é', '🙂', '\u0000', '\u200d', '日']
    let x = 12345
    for (let i = 0; i < 250; i++) {
      let q = ''
      const n = i % 24
      for (let j = 0; j < n; j++) {
        x = (Math.imul(x, 1103515245) + 12345) >>> 0
        q += alphabet[x % alphabet.length]
      }
      expect(() => conversations.search(q), JSON.stringify(q)).not.toThrow()
    }
    // Input far past the query limits is cut, not refused.
    expect(() => conversations.search('word '.repeat(10_000))).not.toThrow()
  })

  it('leaves out deleted conversations and streaming messages, and follows edits', () => {
    const { conversations, messages } = f.store
    const c = conversations.create({ title: 'zebra notes' })
    const reply = messages.append({ conversationId: c.id, role: 'assistant', status: 'streaming' })
    messages.setContent(reply.id, 'the okapi is related to the giraffe')
    expect(conversations.search('okapi')).toEqual([])
    messages.update(reply.id, { status: 'complete' })
    expect(conversations.search('okapi').map((h) => h.messageId)).toEqual([reply.id])

    messages.setContent(reply.id, 'actually about tapirs')
    expect(conversations.search('okapi')).toEqual([])
    expect(conversations.search('tapirs')).toHaveLength(1)
    conversations.rename(c.id, 'mammal notes')
    expect(conversations.search('zebra')).toEqual([])
    expect(conversations.search('mammal')).toHaveLength(1)

    conversations.softDelete(c.id)
    expect(conversations.search('tapirs')).toEqual([])
    expect(conversations.search('mammal')).toEqual([])
    conversations.restore(c.id)
    expect(conversations.search('tapirs')).toHaveLength(1)

    messages.deleteAfter(c.id, -1)
    expect(conversations.search('tapirs')).toEqual([])
    checkIndexes()
  })

  it('indexes a reply cut off by a crash once markInterrupted stops it', () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    const reply = messages.append({ conversationId: c.id, role: 'assistant', status: 'streaming', content: 'unfinished pangolin' })
    const again = f.reopen()
    expect(again.conversations.search('pangolin')).toEqual([])
    again.messages.markInterrupted()
    expect(again.conversations.search('pangolin').map((h) => h.messageId)).toEqual([reply.id])
    checkIndexes()
  })

  it('rejects a limit out of range', () => {
    expect(() => f.store.conversations.search('x', -1)).toThrow(RangeError)
    expect(() => f.store.conversations.search('x', 10_000)).toThrow(RangeError)
  })
})
