/**
 * @file Search over hostile data (issue 10, item 2): a 1M-character message with tens of thousands of hits
 * is found with a short marked snippet, and the search worker answers off the main thread — the event loop
 * keeps turning while it works. No assertion depends on how fast the machine is.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startWorkerThread, workerEntryUrl } from '../../main/engine'
import { API_LIMITS } from '../../preload/api'
import { SearchWorker, SearchWorkerError, SNIPPET_SCAN_CHARS, SNIPPET_WORDS, type SearchHit } from '../../main/store'
import { turnsWhile } from '../helpers/event-loop'
import { storeFixture, type StoreFixture } from './fixture'

let f: StoreFixture
beforeEach(() => {
  f = storeFixture()
})
afterEach(() => f.dispose())

/** The snippet as text with [brackets] around matches. */
const marked = (hit: SearchHit): string => hit.snippet.map((p) => (p.match ? `[${p.text}]` : p.text)).join('')

/** The largest message the API accepts, with "needle" in every fifth word (~33,000 hits). */
const hugeMessage = (): string => 'alpha beta gamma needle delta '.repeat(API_LIMITS.maxMessageChars / 30).slice(0, API_LIMITS.maxMessageChars)

const starter = { entryUrl: workerEntryUrl, start: (entry: URL, data: unknown) => startWorkerThread(entry, data) }

describe('search over a 1,000,000-character message', () => {
  it('finds it, with a short snippet around the first match, matches marked', () => {
    const { conversations, messages } = f.store
    const c = conversations.create({ title: 'haystack' })
    const m = messages.append({ conversationId: c.id, role: 'user', content: hugeMessage() })
    const hits = conversations.search('needle')
    expect(hits.map((h) => h.messageId)).toEqual([m.id])
    expect(marked(hits[0])).toBe('alpha beta gamma [needle] delta alpha beta gamma [needle] delta alpha beta gamma [needle] delta alpha…')
    expect(hits[0].snippet.filter((p) => p.match).length).toBeGreaterThan(0)
  })

  it('finds a match that lies past the snippet scan, showing the opening words', () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    const m = messages.append({ conversationId: c.id, role: 'user', content: `${'filler '.repeat(SNIPPET_SCAN_CHARS / 7 + 10)}needle at the end` })
    const [hit] = conversations.search('needle')
    expect(hit.messageId).toBe(m.id)
    expect(marked(hit)).toBe(`${Array(SNIPPET_WORDS).fill('filler').join(' ')}…`)
  })

  it('the worker answers the same hits, and the main thread keeps turning while it searches', async () => {
    const { conversations, messages } = f.store
    const c = conversations.create({ title: 'needle in a haystack' })
    messages.append({ conversationId: c.id, role: 'user', content: hugeMessage() })
    messages.append({ conversationId: c.id, role: 'assistant', content: 'a short needle reply' })
    const worker = new SearchWorker(f.file, starter)
    try {
      // started and warmed up, so what follows measures a search, not a thread start
      expect(await worker.search('warm', 5)).toEqual([])
      const { turns, result: hits } = await turnsWhile(() => worker.search('needle', 20))
      // A search on the main thread (the old path) would have finished before the first turn could run.
      expect(turns).toBeGreaterThan(0)
      expect(hits).toEqual(conversations.search('needle', 20))
      expect(hits.map((h) => h.messageId === null)).toEqual([true, false, false])
    } finally {
      await worker.dispose()
    }
  })

  it('the worker sees what was committed after it started, and refuses searches once disposed', async () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    const worker = new SearchWorker(f.file, starter)
    try {
      expect(await worker.search('okapi', 5)).toEqual([])
      const m = messages.append({ conversationId: c.id, role: 'user', content: 'the okapi' })
      expect((await worker.search('okapi', 5)).map((h) => h.messageId)).toEqual([m.id])
    } finally {
      await worker.dispose()
    }
    await expect(worker.search('okapi', 5)).rejects.toBeInstanceOf(SearchWorkerError)
    await worker.dispose() // idempotent
  })
})

describe('search and hostile text', () => {
  it('a lone combining accent is not a query that matches everything', () => {
    const { conversations, messages } = f.store
    const c = conversations.create({ title: 'plain title' })
    messages.append({ conversationId: c.id, role: 'user', content: 'café cafe\u0301 plain words' })
    for (const q of ['\u0301', '\u0301\u0308', ' \u0301 ', '\ufe0f']) expect(conversations.search(q), JSON.stringify(q)).toEqual([])
    // a mark on a letter still searches for the letter
    expect(conversations.search('cafe\u0301')).toHaveLength(1)
    expect(marked(conversations.search('cafe')[0])).toBe('[café] [cafe\u0301] plain words')
  })

  it('a NUL in a message does not cut its snippet short', () => {
    const { conversations, messages } = f.store
    const c = conversations.create()
    messages.append({ conversationId: c.id, role: 'user', content: 'start\u0000 middle needle end' })
    expect(marked(conversations.search('needle')[0])).toBe('start\u0000 middle [needle] end')
  })
})
