/**
 * @file Opening the app's SQLite file: refuse what is not ours (not SQLite, or a newer schema) before writing
 * anything, then set the connection up (WAL, foreign keys, busy timeout) and apply pending migrations.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs'
import Database from 'better-sqlite3'
import { errorCode } from '../common/error-code'
import { StoreOpenError, StoreSchemaTooNewError } from './errors'
import { checkMigrations, MIGRATIONS, type Migration } from './migrations'

/** The better-sqlite3 connection type, for code that holds one (the repository classes). */
export type Db = Database.Database

/** A prepared statement; its rows are `unknown` until a RowReader checks them. */
export type Stmt = Database.Statement<unknown[], unknown>

/**
 * How long a write waits for another connection's lock before failing with SQLITE_BUSY. Normally we are the
 * only connection; a second app instance (or a backup tool) holding a lock briefly should not fail a write.
 */
export const BUSY_TIMEOUT_MS = 5000

/** Size the -wal file is truncated back to after checkpoints; it is deleted entirely on close. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024

/** Every SQLite 3 file starts with these 16 bytes (sqlite.org/fileformat.html §1.3). */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1')

/** SQLite result codes that mean "this file is not a (readable) database". */
const NOT_A_DATABASE_CODES = new Set(['SQLITE_NOTADB', 'SQLITE_CORRUPT'])

/**
 * Opens (creating if missing) the database at `file` and brings its schema up to the latest migration.
 * Throws StoreOpenError for a file that is not SQLite or cannot be upgraded, and StoreSchemaTooNewError
 * for a file from a newer app; in both cases the file is not modified. `':memory:'` works for scratch use.
 */
export function openDatabase(file: string, migrations: readonly Migration[] = MIGRATIONS): Db {
  checkMigrations(migrations)
  if (file !== ':memory:') checkHeader(file)
  let db: Db
  try {
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS })
  } catch (err) {
    throw new StoreOpenError(file, `cannot open: ${errorText(err)}`, { cause: err })
  }
  try {
    // Read-only check first: a newer file must not even be switched to WAL.
    const fileVersion = schemaVersion(db, file)
    const appVersion = migrations.length === 0 ? 0 : migrations[migrations.length - 1].version
    if (fileVersion > appVersion) throw new StoreSchemaTooNewError(file, fileVersion, appVersion)
    configure(db, file)
    migrate(db, file, migrations)
    return db
  } catch (err) {
    db.close()
    if (err instanceof StoreOpenError) throw err
    const code = errorCode(err)
    if (code !== undefined && NOT_A_DATABASE_CODES.has(code)) {
      throw new StoreOpenError(file, `not a SQLite database (${code}: ${errorText(err)})`, { cause: err })
    }
    throw new StoreOpenError(file, `cannot open: ${errorText(err)}`, { cause: err })
  }
}

/** The schema version recorded in the file (`PRAGMA user_version`); 0 for a new file. */
export function schemaVersion(db: Db, file = db.name): number {
  const version = db.pragma('user_version', { simple: true })
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 0) {
    throw new StoreOpenError(file, `unexpected user_version ${String(version)}`)
  }
  return version
}

/** Refuses a non-empty file that does not start with the SQLite magic, before SQLite opens it. */
function checkHeader(file: string): void {
  let sizeBytes: number
  try {
    const stat = statSync(file)
    if (!stat.isFile()) throw new StoreOpenError(file, 'is not a regular file')
    sizeBytes = stat.size
  } catch (err) {
    if (err instanceof StoreOpenError) throw err
    return // missing: SQLite creates it (and reports a clear error if the folder is missing)
  }
  // SQLite treats an empty file as a new database.
  if (sizeBytes === 0) return
  const head = Buffer.alloc(SQLITE_MAGIC.length)
  let read = 0
  const fd = openSync(file, 'r')
  try {
    read = readSync(fd, head, 0, head.length, 0)
  } finally {
    closeSync(fd)
  }
  if (read < head.length || !head.equals(SQLITE_MAGIC)) {
    throw new StoreOpenError(file, `not a SQLite database (its first ${head.length} bytes are not the SQLite header)`)
  }
}

/** Connection settings; pragmas, not part of the schema, so they are set on every open. */
function configure(db: Db, file: string): void {
  // WAL: readers never block the writer, and a commit is one append to the -wal file instead of a rewrite
  // of the main file plus a rollback journal.
  const mode = db.pragma('journal_mode = WAL', { simple: true })
  if (mode !== 'wal' && !(db.memory && mode === 'memory')) {
    throw new StoreOpenError(file, `could not switch to WAL journal mode (got ${String(mode)})`)
  }
  // Off by default in SQLite; without it ON DELETE CASCADE and REFERENCES are not enforced.
  db.pragma('foreign_keys = ON')
  // NORMAL in WAL mode syncs the WAL only at checkpoints, not on every commit. A process crash (kill, app
  // crash) still loses nothing committed — the WAL is in the OS cache — and the file never corrupts; only a
  // power loss or OS crash can roll back the last few commits. Streaming writes many small commits a second,
  // and an fsync per token would be far costlier than that risk is worth for chat history.
  db.pragma('synchronous = NORMAL')
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
  // After a checkpoint, shrink a -wal file that one big write (a multi-MB message) grew.
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`)
}

/** Applies each migration above the file's version, one transaction each (schema change + version bump). */
function migrate(db: Db, file: string, migrations: readonly Migration[]): void {
  const startVersion = schemaVersion(db, file)
  for (const m of migrations) {
    if (m.version <= startVersion) continue
    // IMMEDIATE takes the write lock before reading the version, so two processes opening the same new
    // file cannot both apply a migration: the second waits, then sees the version already bumped.
    const apply = db.transaction(() => {
      if (schemaVersion(db, file) >= m.version) return
      db.exec(m.sql)
      // user_version takes no bound parameters; m.version is a checked integer.
      db.pragma(`user_version = ${m.version}`)
    })
    try {
      apply.immediate()
    } catch (err) {
      throw new StoreOpenError(file, `migration ${m.version} (${m.name}) failed: ${errorText(err)}`, { cause: err })
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
