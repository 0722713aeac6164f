/**
 * @file A damaged database file (issue 10, item 3), made with a raw connection or by writing zeros over a
 * page: the search index is rebuilt at open and chatting goes on; a bad message row is shown as damaged
 * while the rest of its conversation opens; damage to a main table is reported as a notice.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DAMAGED_MESSAGE_ERROR, openStore, type Store } from '../../main/store'
import type { AppNotice, ConversationDetail, ConversationSummary } from '../../preload/api'
import { tempDir } from '../helpers/paths'
import { appFixture } from '../services/app-fixture'
import { storeFixture, type StoreFixture } from './fixture'

let f: StoreFixture
beforeEach(() => {
  f = storeFixture()
})
afterEach(() => f.dispose())

/** Runs `edit` on a raw connection to the closed file (no checks, no triggers of ours beyond the schema's). */
function withRaw(file: string, edit: (db: Database.Database) => void): void {
  const db = new Database(file)
  try {
    edit(db)
  } finally {
    db.close()
  }
}

/** Writes zeros over the root page of `table` (after checkpointing, so the page lives in the main file). */
function zeroRootPage(file: string, table: string): void {
  let root = 0
  let pageSize = 0
  withRaw(file, (db) => {
    db.pragma('wal_checkpoint(TRUNCATE)')
    root = Number(db.prepare('SELECT rootpage FROM sqlite_schema WHERE name = ?').pluck().get(table))
    pageSize = Number(db.pragma('page_size', { simple: true }))
  })
  expect(root).toBeGreaterThan(1)
  const fd = openSync(file, 'r+')
  try {
    writeSync(fd, Buffer.alloc(pageSize), 0, pageSize, (root - 1) * pageSize)
  } finally {
    closeSync(fd)
  }
}

/** A conversation with `n` messages mentioning an okapi; returns its id. */
function fill(store: Store, n: number): string {
  const c = store.conversations.create({ title: 'zebra notes' })
  for (let i = 0; i < n; i++) store.messages.append({ conversationId: c.id, role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i} about the okapi ${'x'.repeat(i * 20)}` })
  return c.id
}

describe('a damaged search index', () => {
  for (const table of ['messages_fts_data', 'conversations_fts_data']) {
    it(`is rebuilt at open when a page of ${table} is zeroed: appending and searching work again`, () => {
      const id = fill(f.store, 120)
      f.store.close()
      zeroRootPage(f.file, table)
      // What the user hit before: every append failed with "database disk image is malformed".
      withRaw(f.file, (db) => {
        expect(() => db.exec(`INSERT INTO ${table.replace('_data', '')} (${table.replace('_data', '')}) VALUES ('integrity-check')`)).toThrow(/malformed/)
      })

      const store = f.reopen()
      expect(store.notices.map((n) => n.kind)).toEqual(['search-index-rebuilt'])
      const m = store.messages.append({ conversationId: id, role: 'user', content: 'a new okapi sighting' })
      expect(store.conversations.search('okapi', 200).filter((h) => h.messageId !== null)).toHaveLength(121)
      expect(store.conversations.search('sighting').map((h) => h.messageId)).toEqual([m.id])
      expect(store.conversations.search('zebra').map((h) => h.conversationId)).toEqual([id])
      expect(store.db.pragma('quick_check', { simple: true })).toBe('ok')
      store.db.exec("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)")
      store.db.exec("INSERT INTO conversations_fts (conversations_fts, rank) VALUES ('integrity-check', 1)")
      // and the next start finds nothing to tell
      expect(f.reopen().notices).toEqual([])
    })
  }

  it('is rebuilt when only FTS5 finds it wrong (segments missing from the index)', () => {
    fill(f.store, 5)
    f.store.close()
    withRaw(f.file, (db) => {
      db.unsafeMode(true) // defensive mode forbids writing FTS5's shadow tables
      // rows 1 and 10 are the index's structure and averages; the others are its segments
      db.exec('DELETE FROM messages_fts_data WHERE id > 10')
    })
    const store = f.reopen()
    expect(store.notices.map((n) => n.kind)).toEqual(['search-index-rebuilt'])
    expect(store.conversations.search('okapi')).toHaveLength(5)
  })
})

describe('a corrupt message row', () => {
  it('is shown as damaged while the rest of its conversation opens', () => {
    const id = fill(f.store, 4)
    const [m0, m1, m2, m3] = f.store.messages.list(id)
    f.store.close()
    withRaw(f.file, (db) => {
      // The schema's CHECKs would refuse these; a corrupt or hand-edited file has them anyway.
      db.pragma('ignore_check_constraints = ON')
      db.prepare("UPDATE messages SET status = 'exploded' WHERE id = ?").run(m1.id)
      db.prepare("UPDATE messages SET stats_json = 'not json' WHERE id = ?").run(m2.id)
    })
    const store = f.reopen()
    const list = store.messages.list(id)
    expect(list.map((m) => m.id)).toEqual([m0.id, m1.id, m2.id, m3.id])
    expect(list[1]).toMatchObject({ id: m1.id, seq: m1.seq, role: m1.role, content: '', status: 'error', error: DAMAGED_MESSAGE_ERROR })
    expect(list[2]).toMatchObject({ content: m2.content, status: 'complete', stats: null }) // bad stats: shown without them
    expect(list[0]).toEqual(m0)
    expect(list[3]).toEqual(m3)
    // chatting in the conversation goes on
    expect(store.messages.append({ conversationId: id, role: 'user', content: 'still here' }).seq).toBe(4)
  })

  it('with a wrong-typed column (a blob in a text column) is shown as damaged too', () => {
    const id = fill(f.store, 3)
    const [, m1] = f.store.messages.list(id)
    f.store.close()
    withRaw(f.file, (db) => {
      // STRICT refuses a blob in content; a file written by something else need not be STRICT.
      db.unsafeMode(true)
      db.pragma('writable_schema = ON')
      db.prepare("UPDATE sqlite_schema SET sql = replace(sql, ') STRICT', ')') WHERE name = 'messages'").run()
      db.pragma('writable_schema = OFF')
    })
    withRaw(f.file, (db) => {
      db.prepare("DROP TRIGGER messages_fts_update").run()
      db.prepare('UPDATE messages SET content = ? WHERE id = ?').run(Buffer.from([0xde, 0xad]), m1.id)
    })
    const store = openStore(f.file)
    try {
      const list = store.messages.list(id)
      expect(list).toHaveLength(3)
      expect(list[1]).toMatchObject({ id: m1.id, status: 'error', error: DAMAGED_MESSAGE_ERROR, content: '' })
      expect(list[0].content).toMatch(/^message 0/)
      expect(list[2].content).toMatch(/^message 2/)
    } finally {
      store.close()
    }
  })
})

describe('a damaged main table', () => {
  it('is reported as a notice through the API, and the app opens what it can read', async () => {
    const scratch = tempDir('tandem-damaged-')
    const dataDir = join(scratch.dir, 'data')
    mkdirSync(dataDir)
    const seed = openStore(join(dataDir, 'tandem.db'))
    const small = fill(seed, 3)
    const big = seed.conversations.create({ title: 'big' })
    for (let i = 0; i < 300; i++) seed.messages.append({ conversationId: big.id, role: 'user', content: `filler ${i} ${'y'.repeat(200)}` })
    seed.close()
    // the root of the messages table: every message row is now unreadable
    zeroRootPage(join(dataDir, 'tandem.db'), 'messages')

    const app = appFixture({ dir: scratch.dir, modelDirs: [] })
    try {
      const notices = await app.ok<AppNotice[]>('app:notices')
      expect(notices.map((n) => n.kind)).toEqual(['database-damaged'])
      expect(notices[0].message).toMatch(/tandem\.db is damaged \(Tree \d+ page \d+/)
      const list = await app.ok<ConversationSummary[]>('conversations:list')
      expect(list.map((c) => c.id).sort()).toEqual([small, big.id].sort())
      const detail = await app.ok<ConversationDetail>('conversations:get', small)
      expect(detail.messages).toHaveLength(3)
      expect(detail.messages.every((m) => m.status === 'error' && m.error === DAMAGED_MESSAGE_ERROR)).toBe(true)
      expect(await app.ok<string>('app:version')).toBe('9.9.9-test')
    } finally {
      await app.dispose()
      scratch.dispose()
    }
  })

  it('answers a clear error for a conversation whose own row is damaged, and the others still open', async () => {
    const scratch = tempDir('tandem-damaged-')
    const file = join(scratch.dir, 'data', 'tandem.db')
    mkdirSync(join(scratch.dir, 'data'))
    const seed = openStore(file)
    const good = fill(seed, 2)
    const bad = fill(seed, 2)
    seed.close()
    withRaw(file, (db) => {
      // as for the message above: a file need not be STRICT, and then a blob can sit in a text column
      db.unsafeMode(true)
      db.pragma('writable_schema = ON')
      db.prepare("UPDATE sqlite_schema SET sql = replace(sql, ') STRICT', ')') WHERE name = 'conversations'").run()
      db.pragma('writable_schema = OFF')
    })
    withRaw(file, (db) => db.prepare('UPDATE conversations SET system_prompt = ? WHERE id = ?').run(Buffer.from([0xde, 0xad]), bad))
    const app = appFixture({ dir: scratch.dir, modelDirs: [] })
    try {
      const outcome = await app.call('conversations:get', bad)
      expect(outcome).toMatchObject({ ok: false, error: { name: 'DamagedDataError', message: expect.stringMatching(/damaged and could not be read/) } })
      expect((await app.ok<ConversationDetail>('conversations:get', good)).messages).toHaveLength(2)
    } finally {
      await app.dispose()
      scratch.dispose()
    }
  })

  it('reports nothing for a sound file', async () => {
    expect(f.store.notices).toEqual([])
    const app = appFixture({ modelDirs: [] })
    try {
      expect(await app.ok<AppNotice[]>('app:notices')).toEqual([])
    } finally {
      await app.dispose()
    }
  })
})
