/** @file openDatabase on real files: migrations, reopen, refusing newer schemas and non-database files. */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  checkMigrations,
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  openDatabase,
  openStore,
  schemaVersion,
  StoreOpenError,
  StoreSchemaTooNewError,
  type Migration
} from '../../main/store'
import { tempDir } from '../helpers/paths'

let scratch: ReturnType<typeof tempDir>
let file: string
beforeEach(() => {
  scratch = tempDir('tandem-store-')
  file = join(scratch.dir, 'tandem.db')
})
afterEach(() => scratch.dispose())

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex')

/** Names of tables, views and triggers in the file. */
function schemaNames(db: Database.Database): string[] {
  return db
    .prepare("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger') ORDER BY name")
    .pluck()
    .all()
    .map(String)
}

describe('openDatabase', () => {
  it('creates the latest schema in a new file with WAL, foreign keys, NORMAL sync and a busy timeout', () => {
    const db = openDatabase(file)
    try {
      expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION)
      expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length)
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1)
      expect(db.pragma('synchronous', { simple: true })).toBe(1) // NORMAL
      expect(db.pragma('busy_timeout', { simple: true })).toBe(5000)
      const names = schemaNames(db)
      for (const t of ['conversations', 'messages', 'settings', 'messages_fts', 'conversations_fts', 'messages_searchable', 'device_profiles', 'kv_blocks', 'kv_block_data']) {
        expect(names).toContain(t)
      }
      // v3 dropped it: streamed text lives in messages.content only
      expect(names).not.toContain('message_chunks')
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
      expect(db.pragma('foreign_key_check')).toEqual([])
    } finally {
      db.close()
    }
  })

  it('uses FTS5, which this better-sqlite3 build compiles in', () => {
    const db = openDatabase(':memory:')
    try {
      const options = db.pragma('compile_options', { simple: false })
      expect(JSON.stringify(options)).toContain('ENABLE_FTS5')
    } finally {
      db.close()
    }
  })

  it('reopens a file keeping its data and version, without re-running migrations', () => {
    const store = openStore(file)
    const c = store.conversations.create({ title: 'kept' })
    store.messages.append({ conversationId: c.id, role: 'user', content: 'still here' })
    store.close()

    const again = openStore(file)
    try {
      expect(schemaVersion(again.db)).toBe(LATEST_SCHEMA_VERSION)
      expect(again.conversations.get(c.id)?.title).toBe('kept')
      expect(again.messages.list(c.id).map((m) => m.content)).toEqual(['still here'])
    } finally {
      again.close()
    }
  })

  it('applies an appended migration to an existing file and keeps its data', () => {
    const store = openStore(file)
    const c = store.conversations.create({ title: 'before v2' })
    store.close()

    const v2: Migration[] = [
      ...MIGRATIONS,
      { version: LATEST_SCHEMA_VERSION + 1, name: 'a later table', sql: 'CREATE TABLE later_table (id TEXT PRIMARY KEY, json TEXT NOT NULL) STRICT;' }
    ]
    const db = openDatabase(file, v2)
    try {
      expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION + 1)
      expect(schemaNames(db)).toContain('later_table')
      expect(db.prepare('SELECT title FROM conversations WHERE id = ?').pluck().get(c.id)).toBe('before v2')
    } finally {
      db.close()
    }
  })

  it('v3 folds chunk rows left by an older build into their message, in order, then drops message_chunks', () => {
    // A v2 file as the older build left it after a crash: a reply cut off mid-stream with its chunks not
    // yet folded (that build stored each streamed piece as a row and folded them when the reply finished).
    const v2 = openDatabase(file, MIGRATIONS.slice(0, 2))
    v2.exec(`
      INSERT INTO conversations (id, title, system_prompt, sampling_json, created_at, updated_at) VALUES ('c', 'crashed', '', '{}', 1, 1);
      INSERT INTO messages (n, id, conversation_id, seq, role, content, status, created_at, updated_at)
        VALUES (10, 'u', 'c', 0, 'user', 'Tell me about pangolins', 'complete', 1, 1),
               (11, 'a', 'c', 1, 'assistant', 'Pangolins ', 'streaming', 1, 1),
               (12, 'b', 'c', 2, 'assistant', 'no chunks here', 'streaming', 1, 1);
      INSERT INTO message_chunks (message_n, k, text) VALUES (11, 2, ' scales 🙂'), (11, 0, 'have'), (11, 1, ' keratin');
    `)
    expect(schemaVersion(v2)).toBe(2)
    v2.close()

    const store = openStore(file)
    try {
      expect(schemaVersion(store.db)).toBe(LATEST_SCHEMA_VERSION)
      expect(schemaNames(store.db)).not.toContain('message_chunks')
      // the text the older build showed (content, then the chunks in k order), still streaming until startup
      expect(store.messages.get('a')).toMatchObject({ content: 'Pangolins have keratin scales 🙂', status: 'streaming' })
      expect(store.messages.get('b')).toMatchObject({ content: 'no chunks here', status: 'streaming' })
      expect(store.messages.get('u')?.content).toBe('Tell me about pangolins')
      // startup recovery then stops the replies and indexes their whole text
      expect(store.messages.markInterrupted()).toBe(2)
      expect(store.conversations.search('keratin').map((h) => h.messageId)).toEqual(['a'])
      expect(store.db.pragma('integrity_check', { simple: true })).toBe('ok')
      expect(store.db.pragma('foreign_key_check')).toEqual([])
    } finally {
      store.close()
    }
  })

  it('rolls a failing migration back entirely and names it', () => {
    openDatabase(file).close()
    const broken: Migration[] = [
      ...MIGRATIONS,
      { version: LATEST_SCHEMA_VERSION + 1, name: 'half done', sql: 'CREATE TABLE half (x INTEGER); SELECT * FROM no_such_table;' }
    ]
    expect(() => openDatabase(file, broken)).toThrow(new RegExp(`migration ${LATEST_SCHEMA_VERSION + 1} \\(half done\\) failed: no such table: no_such_table`))
    const db = openDatabase(file)
    try {
      expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION)
      expect(schemaNames(db)).not.toContain('half')
    } finally {
      db.close()
    }
  })

  it('refuses mis-numbered migration lists', () => {
    expect(() => checkMigrations([{ version: 2, name: 'gap', sql: '' }])).toThrow(/expected 1/)
    expect(() => checkMigrations([...MIGRATIONS, { version: LATEST_SCHEMA_VERSION + 2, name: 'skip', sql: '' }])).toThrow(
      new RegExp(`has version ${LATEST_SCHEMA_VERSION + 2}, expected ${LATEST_SCHEMA_VERSION + 1}`)
    )
  })

  it('refuses a file from a newer app, naming the file and both versions, and leaves it untouched', () => {
    // A rollback-journal file, as a newer app might leave it; opening must not even switch it to WAL.
    const raw = new Database(file)
    raw.exec('CREATE TABLE future (x INTEGER)')
    raw.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 5}`)
    raw.close()
    const before = sha256(file)

    let caught: unknown
    try {
      openDatabase(file)
    } catch (err) {
      caught = err
    }
    expect(caught).toBeInstanceOf(StoreSchemaTooNewError)
    expect(caught).toBeInstanceOf(StoreOpenError)
    const message = caught instanceof Error ? caught.message : ''
    expect(message).toContain(file)
    expect(message).toContain(`version ${LATEST_SCHEMA_VERSION + 5}`)
    expect(message).toContain(`(${LATEST_SCHEMA_VERSION})`)
    expect(sha256(file)).toBe(before)
    expect(existsSync(`${file}-wal`)).toBe(false)
  })

  it('refuses a file that is not SQLite, naming it, and leaves it untouched', () => {
    writeFileSync(file, '{"this": "is JSON, not a database"}\n'.repeat(200))
    const before = sha256(file)
    expect(() => openDatabase(file)).toThrow(StoreOpenError)
    expect(() => openDatabase(file)).toThrow(`${file}: not a SQLite database`)
    expect(sha256(file)).toBe(before)

    // Shorter than the header.
    writeFileSync(file, 'SQLite')
    expect(() => openDatabase(file)).toThrow(`${file}: not a SQLite database`)
  })

  it('refuses a file with the SQLite header but a garbage body', () => {
    writeFileSync(file, Buffer.concat([Buffer.from('SQLite format 3\0', 'latin1'), Buffer.alloc(8192, 0xa5)]))
    expect(() => openDatabase(file)).toThrow(`${file}: not a SQLite database`)
  })

  it('treats an empty file as a new database, and names the path when its folder is missing', () => {
    writeFileSync(file, '')
    const db = openDatabase(file)
    expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION)
    db.close()
    const missing = join(scratch.dir, 'no-such-folder', 'x.db')
    expect(() => openDatabase(missing)).toThrow(`${missing}: cannot open`)
  })
})
