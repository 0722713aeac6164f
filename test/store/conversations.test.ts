/** @file ConversationStore on a real file: CRUD, ordering, soft delete / restore / purge, cascade, branches, corrupt rows. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConversationStore, StoreDataError, StoreNotFoundError } from '../../main/store'
import { storeFixture, type StoreFixture } from './fixture'

let f: StoreFixture
beforeEach(() => {
  f = storeFixture()
})
afterEach(() => f.dispose())

describe('ConversationStore', () => {
  it('creates with defaults and with every field, and reads back typed values', () => {
    const { conversations } = f.store
    const plain = conversations.create()
    expect(plain).toEqual({
      id: plain.id,
      title: '',
      systemPrompt: '',
      modelId: null,
      sampling: {},
      createdAtMs: f.clock.now(),
      updatedAtMs: f.clock.now(),
      deletedAtMs: null,
      parentId: null,
      branchSeq: null
    })
    expect(plain.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)

    const full = conversations.create({
      title: 'Trip ✈️ plans',
      systemPrompt: 'You are terse.',
      modelId: 'stories260K',
      sampling: { temperature: 0.7, topK: 20, stop: ['\n\n'], skipped: undefined }
    })
    expect(conversations.get(full.id)).toEqual(full)
    expect(full.sampling).toEqual({ temperature: 0.7, topK: 20, stop: ['\n\n'] })
    expect(conversations.get('no-such-id')).toBeUndefined()
  })

  it('refuses sampling that JSON cannot hold', () => {
    const { conversations } = f.store
    expect(() => conversations.create({ sampling: { temperature: Number.NaN } })).toThrow(TypeError)
    expect(() => conversations.create({ sampling: [1, 2] })).toThrow(TypeError)
    expect(conversations.list()).toEqual([])
  })

  it('edits title, system prompt, model and sampling, bumping updatedAtMs', () => {
    const { conversations } = f.store
    const c = conversations.create({ title: 'old' })
    f.clock.advance(10)
    expect(conversations.rename(c.id, 'new').title).toBe('new')
    f.clock.advance(10)
    expect(conversations.setSystemPrompt(c.id, 'Be brief.').systemPrompt).toBe('Be brief.')
    f.clock.advance(10)
    expect(conversations.setModel(c.id, 'qwen').modelId).toBe('qwen')
    expect(conversations.setModel(c.id, null).modelId).toBeNull()
    f.clock.advance(10)
    const last = conversations.setSampling(c.id, { seed: 42 })
    expect(last.sampling).toEqual({ seed: 42 })
    expect(last.createdAtMs).toBe(c.createdAtMs)
    expect(last.updatedAtMs).toBe(c.createdAtMs + 40)
    expect(() => conversations.rename('missing', 'x')).toThrow(StoreNotFoundError)
  })

  it('lists most recently updated first, excluding deleted, with a stable tie-break and a limit', () => {
    const { conversations, messages } = f.store
    const a = conversations.create({ title: 'a' })
    const b = conversations.create({ title: 'b' }) // same timestamp as a: later insert first
    f.clock.advance(5)
    const c = conversations.create({ title: 'c' })
    expect(conversations.list().map((x) => x.title)).toEqual(['c', 'b', 'a'])

    f.clock.advance(5)
    messages.append({ conversationId: a.id, role: 'user', content: 'bump' })
    expect(conversations.list().map((x) => x.title)).toEqual(['a', 'c', 'b'])
    expect(conversations.list(2).map((x) => x.title)).toEqual(['a', 'c'])
    expect(conversations.list(0)).toEqual([])
    expect(() => conversations.list(-1)).toThrow(RangeError)

    conversations.softDelete(c.id)
    expect(conversations.list().map((x) => x.id)).toEqual([a.id, b.id])
  })

  it('soft-deletes, restores, and purges only what was deleted long enough ago, cascading to messages', () => {
    const { conversations, messages } = f.store
    const old = conversations.create({ title: 'old' })
    const recent = conversations.create({ title: 'recent' })
    const kept = conversations.create({ title: 'kept' })
    for (const c of [old, recent, kept]) {
      messages.append({ conversationId: c.id, role: 'user', content: `hello from ${c.title}` })
      messages.append({ conversationId: c.id, role: 'assistant', content: 'reply' })
    }

    conversations.softDelete(old.id)
    expect(conversations.get(old.id)?.deletedAtMs).toBe(f.clock.now())
    f.clock.advance(60_000)
    conversations.softDelete(old.id) // deleting again keeps the first time
    expect(conversations.get(old.id)?.deletedAtMs).toBe(f.clock.now() - 60_000)
    conversations.softDelete(recent.id)

    // Undo brings it back in place, messages intact.
    conversations.restore(recent.id)
    expect(conversations.get(recent.id)?.deletedAtMs).toBeNull()
    expect(messages.list(recent.id)).toHaveLength(2)
    conversations.softDelete(recent.id)

    expect(conversations.purgeDeleted(120_000)).toBe(0)
    expect(conversations.purgeDeleted(30_000)).toBe(1) // old: deleted 60 s ago
    expect(conversations.get(old.id)).toBeUndefined()
    expect(messages.list(old.id)).toEqual([])
    expect(conversations.get(recent.id)?.deletedAtMs).not.toBeNull()
    expect(conversations.purgeDeleted(0)).toBe(1) // recent
    expect(conversations.list().map((c) => c.id)).toEqual([kept.id])
    expect(messages.list(kept.id)).toHaveLength(2)

    const { db } = f.store
    expect(db.prepare('SELECT COUNT(*) FROM messages').pluck().get()).toBe(2)
    expect(db.pragma('foreign_key_check')).toEqual([])
    // The external-content FTS indexes agree with their tables after the cascade.
    db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")
    db.exec("INSERT INTO conversations_fts (conversations_fts, rank) VALUES ('integrity-check', 1)")

    expect(() => conversations.softDelete(old.id)).toThrow(StoreNotFoundError)
    expect(() => conversations.restore(old.id)).toThrow(StoreNotFoundError)
    expect(() => conversations.purgeDeleted(-1)).toThrow(RangeError)
  })

  it('cascades a hard delete of a conversation to its messages (foreign keys are on)', () => {
    const { conversations, messages, db } = f.store
    const c = conversations.create()
    const m = messages.append({ conversationId: c.id, role: 'user', content: 'x' })
    db.prepare('DELETE FROM conversations WHERE id = ?').run(c.id)
    expect(messages.get(m.id)).toBeUndefined()
  })

  it('branches: copies the messages up to the branch point with their stats, links the parent, survives its purge', () => {
    const { conversations, messages } = f.store
    const parent = conversations.create({ title: 'Trip', systemPrompt: 'Be brief.', modelId: 'm', sampling: { temperature: 0 } })
    const stats = { ttftMs: 5, prefillTokensPerSec: 1, decodeTokensPerSec: 1, promptTokens: 3, generatedTokens: 2, model: 'm', devices: ['CPU'], deviceBusy: [], reusedTokens: 0, restoredTokens: 0 }
    messages.append({ conversationId: parent.id, role: 'user', content: 'one' })
    const reply = messages.append({ conversationId: parent.id, role: 'assistant', content: 'two', stats })
    messages.append({ conversationId: parent.id, role: 'user', content: 'three' })
    f.clock.advance(1000)
    const branch = conversations.branch(parent.id, reply.seq, 'Trip (branch)')
    expect(branch).toMatchObject({ title: 'Trip (branch)', systemPrompt: 'Be brief.', modelId: 'm', sampling: { temperature: 0 }, parentId: parent.id, branchSeq: reply.seq, createdAtMs: f.clock.now() })
    const copied = messages.list(branch.id)
    expect(copied.map((m) => [m.seq, m.role, m.content])).toEqual([
      [0, 'user', 'one'],
      [1, 'assistant', 'two']
    ])
    expect(copied[1].stats).toEqual(reply.stats)
    expect(copied[1].id).not.toBe(reply.id)
    expect(messages.list(parent.id)).toHaveLength(3)
    // the copies are searchable as the branch's own
    expect(conversations.search('two').some((h) => h.conversationId === branch.id)).toBe(true)
    // a seq the parent lacks, a streaming message, an unknown parent: refused, nothing written
    const before = conversations.list().length
    expect(() => conversations.branch(parent.id, 7, '')).toThrow(/has no message 7/)
    const streaming = messages.append({ conversationId: parent.id, role: 'assistant', content: '', status: 'streaming' })
    expect(() => conversations.branch(parent.id, streaming.seq, '')).toThrow(/still being written/)
    expect(() => conversations.branch('nope', 0, '')).toThrow(StoreNotFoundError)
    expect(conversations.list()).toHaveLength(before)
    // purging the parent leaves the branch standing on its own
    conversations.softDelete(parent.id)
    expect(conversations.purgeDeleted(0)).toBe(1)
    expect(conversations.get(branch.id)?.parentId).toBeNull()
    expect(messages.list(branch.id)).toHaveLength(2)
  })

  it('keeps data across reopen', () => {
    const c = f.store.conversations.create({ title: 'persist', sampling: { topP: 0.9 } })
    const again = f.reopen()
    expect(again.conversations.get(c.id)).toEqual(c)
  })

  it('reads corrupt sampling_json as {} (no overrides)', () => {
    const { conversations, db } = f.store
    const c = conversations.create({ sampling: { topK: 5 } })
    // Bypass the schema's CHECK to simulate a file damaged or edited outside the app.
    db.pragma('ignore_check_constraints = ON')
    db.prepare("UPDATE conversations SET sampling_json = '{not json' WHERE id = ?").run(c.id)
    expect(conversations.get(c.id)?.sampling).toEqual({})
    db.prepare("UPDATE conversations SET sampling_json = '[1]' WHERE id = ?").run(c.id)
    expect(conversations.get(c.id)?.sampling).toEqual({})
    db.pragma('ignore_check_constraints = OFF')
  })
})

describe('row validation', () => {
  it('throws StoreDataError naming table, row and column for a mistyped column', () => {
    const { conversations, db } = f.store
    const c = conversations.create({ title: 'fine' })
    // A non-STRICT table with the same columns stands in for a damaged file: swap it in under the same name.
    db.exec(`
      ALTER TABLE conversations RENAME TO conversations_ok;
      CREATE TABLE conversations AS SELECT * FROM conversations_ok;
      UPDATE conversations SET created_at = 'yesterday';
    `)
    let caught: unknown
    try {
      // A new store prepares its statements against the swapped-in table.
      new ConversationStore(db).get(c.id)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(StoreDataError)
    expect(String(caught)).toContain(`conversations row "${c.id}": column created_at: expected an integer, got "yesterday"`)
  })
})
