/** @file DocumentStore on a real file: attach and read back, the text's checksum, the stored summary a file finds, branches and purges. */
import { createHash } from 'node:crypto'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { StoreDataError } from '../../main/store'
import { storeFixture, type StoreFixture } from './fixture'

let f: StoreFixture
beforeEach(() => {
  f = storeFixture()
})
afterEach(() => f.dispose())

const sha = (text: string): string => createHash('sha256').update(text).digest('hex')
const FILE = { name: 'report.pdf', type: 'pdf', bytes: 12_345, sha256: sha('report bytes'), text: 'Quarterly report.\n\nRevenue rose by 12% ✓.' }

/** A conversation with the file, its request and a reply of `status`. */
function summarized(status: 'complete' | 'stopped' | 'streaming' = 'complete', content = 'A summary.'): { id: string; replyId: string } {
  const { conversations, documents, messages } = f.store
  const c = conversations.create({ title: FILE.name })
  documents.attach(c.id, FILE)
  messages.append({ conversationId: c.id, role: 'user', content: `Summarize ${FILE.name}` })
  const reply = messages.append({ conversationId: c.id, role: 'assistant', content, status })
  return { id: c.id, replyId: reply.id }
}

describe('DocumentStore', () => {
  it('attaches a file to a conversation and reads it back, the text whole', () => {
    const { id } = summarized()
    expect(f.store.documents.get(id)).toEqual({ conversationId: id, name: 'report.pdf', type: 'pdf', bytes: 12_345, sha256: FILE.sha256, textChars: FILE.text.length, createdAtMs: f.clock.now() })
    expect(f.store.documents.text(id)).toBe(FILE.text)
    expect(f.store.documents.get('none')).toBeUndefined()
    expect(f.store.documents.text('none')).toBeUndefined()
    // one file per conversation; malformed values refused before they are written
    expect(() => f.store.documents.attach(id, FILE)).toThrow(/UNIQUE|PRIMARY KEY/)
    const other = f.store.conversations.create()
    expect(() => f.store.documents.attach(other.id, { ...FILE, sha256: 'abc' })).toThrow(RangeError)
    expect(() => f.store.documents.attach(other.id, { ...FILE, bytes: -1 })).toThrow(RangeError)
    expect(() => f.store.documents.attach('no-such-conversation', FILE)).toThrow(/FOREIGN KEY/)
  })

  it('a damaged text is an error naming the file, never part of a prompt', () => {
    const { id } = summarized()
    f.store.db.prepare('UPDATE documents SET text = ? WHERE conversation_id = ?').run('Quarterly report.', id)
    expect(() => f.store.documents.text(id)).toThrow(StoreDataError)
    expect(() => f.store.documents.text(id)).toThrow(/report\.pdf is damaged/)
  })

  it('finds the newest finished summary of the same bytes, not a stopped one or one deleted', () => {
    const { documents, conversations } = f.store
    expect(documents.findSummary(FILE.sha256)).toBeUndefined()
    summarized('stopped', 'half a sum')
    summarized('streaming', '')
    expect(documents.findSummary(FILE.sha256)).toBeUndefined()
    const first = summarized()
    expect(documents.findSummary(FILE.sha256)).toEqual({ conversationId: first.id, messageId: first.replyId })
    f.clock.advance(1000)
    const second = summarized()
    expect(documents.findSummary(FILE.sha256)).toEqual({ conversationId: second.id, messageId: second.replyId })
    expect(documents.findSummary(sha('other bytes'))).toBeUndefined()
    conversations.softDelete(second.id)
    expect(documents.findSummary(FILE.sha256)?.conversationId).toBe(first.id)
    // the summary is the first reply: a later follow-up does not stand in for it
    const { messages } = f.store
    const third = conversations.create()
    documents.attach(third.id, { ...FILE, sha256: sha('third') })
    messages.append({ conversationId: third.id, role: 'user', content: 'Summarize' })
    messages.append({ conversationId: third.id, role: 'assistant', content: '', status: 'stopped' })
    messages.append({ conversationId: third.id, role: 'user', content: 'What about revenue?' })
    messages.append({ conversationId: third.id, role: 'assistant', content: 'It rose.', status: 'complete' })
    expect(documents.findSummary(sha('third'))).toBeUndefined()
  })

  it('a branch keeps the file; a purge removes it with its conversation', () => {
    const { conversations, documents, messages } = f.store
    const { id } = summarized()
    const branch = conversations.branch(id, messages.list(id)[1].seq, 'report.pdf (branch)')
    expect(documents.get(branch.id)).toMatchObject({ name: 'report.pdf', sha256: FILE.sha256 })
    expect(documents.text(branch.id)).toBe(FILE.text)
    conversations.softDelete(id)
    f.clock.advance(10)
    expect(conversations.purgeDeleted(0)).toBe(1)
    expect(documents.get(id)).toBeUndefined()
    expect(documents.text(branch.id)).toBe(FILE.text)
  })
})
