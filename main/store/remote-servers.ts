/**
 * @file Other servers the user added (migration 7): name, URL and how its key is kept. The key itself is either
 * sealed by the OS keychain (the services seal and open it; this table only holds the bytes) or not here at all.
 */
import { randomUUID } from 'node:crypto'
import type { Db, Stmt } from './database'
import { StoreNotFoundError } from './errors'
import { RowReader } from './rows'
import type { StoreOptions } from './types'

/** How a server's key is kept: none needed, sealed here, or given for this run only (kept in memory by the caller). */
export type StoredKeyKind = 'none' | 'sealed' | 'session'

/** One server's row. */
export interface RemoteServerRecord {
  readonly id: string
  readonly name: string
  readonly url: string
  readonly keyKind: StoredKeyKind
  /** the key as the keychain sealed it, when keyKind is 'sealed' */
  readonly sealedKey: Uint8Array | null
  readonly createdAtMs: number
}

/** A server to add or a key to set: how its key is kept, with the sealed bytes when sealed. */
export type StoredKey = { readonly kind: 'none' | 'session' } | { readonly kind: 'sealed'; readonly sealed: Uint8Array }

const KEY_KINDS: readonly StoredKeyKind[] = ['none', 'sealed', 'session']
const COLUMNS = 'id, name, url, key_kind, sealed_key, created_at'

/** The remote_servers table. */
export class RemoteServerStore {
  private readonly now: () => number
  private readonly listStmt: Stmt
  private readonly getStmt: Stmt
  private readonly insertStmt: Stmt
  private readonly keyStmt: Stmt
  private readonly deleteStmt: Stmt

  constructor(db: Db, options: StoreOptions = {}) {
    this.now = options.now ?? Date.now
    this.listStmt = db.prepare(`SELECT ${COLUMNS} FROM remote_servers ORDER BY created_at, id`)
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM remote_servers WHERE id = ?`)
    this.insertStmt = db.prepare('INSERT INTO remote_servers (id, name, url, key_kind, sealed_key, created_at) VALUES (@id, @name, @url, @keyKind, @sealedKey, @nowMs)')
    this.keyStmt = db.prepare('UPDATE remote_servers SET key_kind = @keyKind, sealed_key = @sealedKey WHERE id = @id')
    this.deleteStmt = db.prepare('DELETE FROM remote_servers WHERE id = ?')
  }

  /** Every server, oldest first. */
  list(): RemoteServerRecord[] {
    return this.listStmt.all().map(toRecord)
  }

  get(id: string): RemoteServerRecord | undefined {
    const row = this.getStmt.get(id)
    return row === undefined ? undefined : toRecord(row)
  }

  /** Adds a server; a name already taken is refused by the UNIQUE constraint (SqliteError), so check first. */
  add(server: { readonly name: string; readonly url: string; readonly key: StoredKey }): RemoteServerRecord {
    const id = randomUUID()
    this.insertStmt.run({ id, name: server.name, url: server.url, keyKind: server.key.kind, sealedKey: sealedOf(server.key), nowMs: this.now() })
    return this.require(id)
  }

  /** Sets how a server's key is kept. */
  setKey(id: string, key: StoredKey): RemoteServerRecord {
    if (this.keyStmt.run({ id, keyKind: key.kind, sealedKey: sealedOf(key) }).changes === 0) throw new StoreNotFoundError('remote server', id)
    return this.require(id)
  }

  /** Forgets a server; false when there was none. */
  remove(id: string): boolean {
    return this.deleteStmt.run(id).changes > 0
  }

  private require(id: string): RemoteServerRecord {
    const record = this.get(id)
    if (record === undefined) throw new StoreNotFoundError('remote server', id)
    return record
  }
}

function sealedOf(key: StoredKey): Buffer | null {
  return key.kind === 'sealed' ? Buffer.from(key.sealed) : null
}

function toRecord(row: unknown): RemoteServerRecord {
  const r = new RowReader('remote_servers', row)
  return {
    id: r.text('id'),
    name: r.text('name'),
    url: r.text('url'),
    keyKind: r.oneOf('key_kind', KEY_KINDS),
    sealedKey: r.blobOrNull('sealed_key'),
    createdAtMs: r.int('created_at')
  }
}
