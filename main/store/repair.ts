/**
 * @file Checking the database at start and repairing what is derived data. SQLite's quick_check reads every
 * page once (linear in the file, bounded to MAX_CHECK_ERRORS reports) and each FTS5 index checks its own
 * structure. A damaged full-text index is rebuilt from the tables it indexes: it holds nothing else, and
 * left as it is it fails every write that touches it (every message append) for good. Damage anywhere else
 * is reported, not repaired: the rows that can still be read are shown (messages one by one, see
 * messages.ts), and the user is told so they can keep a copy of the file.
 */
import { isRecord } from '../common/reader'
import type { Db } from './database'
import { FTS_INDEXES } from './migrations'

/** Most problems quick_check reports; enough to tell which tables are hit, and it stops scanning after them. */
export const MAX_CHECK_ERRORS = 20

/** Something the user should be told about the database, found when it was opened. */
export interface StoreNotice {
  /** 'search-index-rebuilt': repaired, nothing lost; 'database-damaged': some data may be unreadable */
  readonly kind: 'search-index-rebuilt' | 'database-damaged'
  readonly message: string
}

/** The checked connection (a new one when a repair had to reopen the file) and what to tell the user. */
export interface CheckedDatabase {
  readonly db: Db
  readonly notices: readonly StoreNotice[]
}

type FtsName = keyof typeof FTS_INDEXES

const FTS_NAMES: readonly FtsName[] = ['messages_fts', 'conversations_fts']

/**
 * Checks the open database `db` of `file` and rebuilds damaged search indexes. `reopen` opens the file again
 * (openDatabase), for the repair that must forget the old schema. Never throws for damage it finds: it is
 * reported as a notice, and the app opens what it can read.
 */
export function checkDatabase(db: Db, file: string, reopen: () => Db): CheckedDatabase {
  let problems = quickCheck(db)
  const hitTables = damagedTables(db, problems)
  const damaged = FTS_NAMES.filter((name) => hitTables.some((t) => t === name || t.startsWith(`${name}_`)) || ftsProblem(db, name) !== null)
  const notices: StoreNotice[] = []
  let current = db
  if (damaged.length > 0) {
    try {
      current = rebuildIndexes(db, damaged, reopen)
      notices.push({
        kind: 'search-index-rebuilt',
        message: 'The search index was damaged and has been rebuilt from your conversations. Nothing was lost.'
      })
    } catch (err) {
      // the repair may have failed after closing the connection it was given
      if (!current.open) current = reopen()
      notices.push({ kind: 'database-damaged', message: `The search index is damaged and could not be rebuilt (${errorText(err)}); search may fail.` })
    }
    problems = quickCheck(current)
  }
  if (problems.length > 0) {
    const more = problems.length > 1 ? ` and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''}` : ''
    notices.push({
      kind: 'database-damaged',
      message:
        `The database file ${file} is damaged (${problems[0]}${more}). Tandem opened what it could read; ` +
        'messages that could not be read are marked as damaged. Keep a copy of the file before you change anything.'
    })
  }
  return { db: current, notices }
}

/** quick_check's findings, one per line (empty when the file is sound). */
function quickCheck(db: Db): string[] {
  let rows: unknown
  try {
    rows = db.pragma(`quick_check(${MAX_CHECK_ERRORS})`)
  } catch (err) {
    return [errorText(err)]
  }
  if (!Array.isArray(rows)) return [`unexpected quick_check result ${String(rows)}`]
  return rows
    .flatMap((row: unknown) => (isRecord(row) && typeof row.quick_check === 'string' ? row.quick_check.split('\n') : [String(row)]))
    .filter((line) => line !== 'ok' && !line.startsWith('*** in database'))
}

/** Tables whose b-tree quick_check names ("Tree 12 page 40 ..." names the tree by its root page). */
function damagedTables(db: Db, problems: readonly string[]): string[] {
  const roots = new Set(problems.flatMap((p) => /^Tree (\d+) /.exec(p)?.slice(1, 2).map(Number) ?? []))
  if (roots.size === 0) return []
  const tables: string[] = []
  for (const row of db.prepare('SELECT name, rootpage FROM sqlite_schema WHERE rootpage > 0').all()) {
    if (isRecord(row) && typeof row.name === 'string' && typeof row.rootpage === 'number' && roots.has(row.rootpage)) tables.push(row.name)
  }
  return tables
}

/** What FTS5's own structure check says is wrong with index `name`, or null when it is sound. */
function ftsProblem(db: Db, name: FtsName): string | null {
  try {
    db.prepare(`INSERT INTO ${name} (${name}) VALUES ('integrity-check')`).run()
    return null
  } catch (err) {
    return errorText(err)
  }
}

/**
 * Rebuilds each index in `names` from its content; returns the connection to use from now on. FTS5's
 * 'rebuild' first empties the index, which fails when its pages cannot be read — and so does DROP TABLE,
 * which frees them page by page. Such an index is removed from the schema directly (writable_schema), the
 * file is reopened so SQLite forgets it, VACUUM writes the file anew without the lost pages, and the index
 * is created again and filled.
 */
function rebuildIndexes(db: Db, names: readonly FtsName[], reopen: () => Db): Db {
  const unreadable = names.filter((name) => {
    try {
      db.exec(`INSERT INTO ${name} (${name}) VALUES ('rebuild')`)
      return ftsProblem(db, name) !== null
    } catch {
      return true
    }
  })
  if (unreadable.length === 0) return db
  // better-sqlite3's defensive mode forbids writing sqlite_schema; unsafe mode lifts it for this statement.
  db.unsafeMode(true)
  db.pragma('writable_schema = ON')
  try {
    const remove = db.prepare("DELETE FROM sqlite_schema WHERE type = 'table' AND (name = ? OR name LIKE ? ESCAPE '\\')")
    db.transaction(() => {
      for (const name of unreadable) remove.run(name, `${name.replaceAll('_', '\\_')}\\_%`)
    })()
  } finally {
    db.pragma('writable_schema = OFF')
    db.unsafeMode(false)
  }
  db.close()
  const fresh = reopen()
  try {
    try {
      fresh.exec('VACUUM')
    } catch {
      // Other damage stops VACUUM; the index still comes back below, and quick_check reports the rest.
    }
    for (const name of unreadable) {
      fresh.exec(FTS_INDEXES[name])
      fresh.exec(`INSERT INTO ${name} (${name}) VALUES ('rebuild')`)
    }
    return fresh
  } catch (err) {
    fresh.close()
    throw err
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
