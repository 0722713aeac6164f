/**
 * @file KV-cache snapshots as a trie of blocks. A conversation's KV cache is saved as consecutive blocks of token
 * positions; a block's key is the hash of its parent's key and its own token ids, and the chain starts at a root
 * derived from the model fingerprint (weights, compiler, KV layout and format). So a block is content-addressed by
 * the whole prefix it continues: two conversations that share a system prompt share its blocks, an edited message
 * or a branch reuses the blocks of the unchanged prefix, and a snapshot of another model can never match.
 *
 * Every block carries its token ids (compared exactly, never trusted through the hash alone), a checksum of its data,
 * and its byte length; a block that fails any check is deleted with everything after it and reported, so the caller
 * recomputes. Eviction is least recently used over blocks: restoring touches the whole chain, so a prefix is always
 * at least as recent as what continues it and the leaves go first; removing a block removes its descendants, which
 * could no longer be reached.
 *
 * The store does not know the KV layout: the caller says how many bytes a block takes in the format it wrote.
 */
import { createHash } from 'node:crypto'
import { crc32 } from 'node:zlib'
import type { Db, Stmt } from './database'
import { RowReader } from './rows'
import { isRecord } from '../common/reader'
import type { StoreOptions } from './types'

/** Most tokens in one block (a block is one row: its data stays well below SQLite's 1 GB BLOB limit). */
export const MAX_KV_BLOCK_TOKENS = 1 << 16
/** Largest block data accepted (bytes). */
export const MAX_KV_BLOCK_BYTES = 512 * 1024 * 1024
/** Longest model fingerprint accepted (characters). */
export const MAX_KV_FINGERPRINT_LENGTH = 1024

/** A stored block whose place in the chain was verified (token ids, key, position); its data is read by `read`. */
export interface KvBlockRef {
  readonly key: string
  /** position of the block's first token in the sequence */
  readonly start: number
  readonly tokenCount: number
}

/** What `match` found: the chain of blocks `tokens` begins with, and why it stopped early, if it did. */
export interface KvMatch {
  readonly blocks: readonly KvBlockRef[]
  /** tokens the chain covers (the sum of its blocks') */
  readonly tokens: number
  /** each damaged block found, with the reason; such blocks and their descendants are gone */
  readonly problems: readonly string[]
}

/**
 * The checksum of a block's data: CRC-32 (zlib's, several GB/s), which detects the flipped bits and torn writes it
 * guards against at a third of SHA-256's cost on a restore's critical path; keys stay SHA-256 (they address content).
 */
function checksumOf(data: Uint8Array): string {
  return `crc32:${crc32(data).toString(16).padStart(8, '0')}`
}

function sha256(...parts: readonly (string | Uint8Array)[]): string {
  const h = createHash('sha256')
  for (const p of parts) h.update(p)
  return h.digest('hex')
}

/** Token ids as little-endian int32 bytes (how a block stores them). */
function tokenBytes(tokens: readonly number[]): Uint8Array {
  const out = new Uint8Array(tokens.length * 4)
  const view = new DataView(out.buffer)
  tokens.forEach((t, i) => {
    if (!Number.isInteger(t) || t < 0 || t > 0x7fffffff) throw new RangeError(`token id ${t} is not a non-negative int32`)
    view.setInt32(i * 4, t, true)
  })
  return out
}

/** The key of the chain's root for a model fingerprint. */
export function kvRootKey(fingerprint: string): string {
  if (fingerprint.length === 0 || fingerprint.length > MAX_KV_FINGERPRINT_LENGTH) throw new RangeError(`a KV fingerprint must be 1..${MAX_KV_FINGERPRINT_LENGTH} characters`)
  return sha256('tandem-kv-root-1\n', fingerprint)
}

/** The key of a block continuing `parent` with `tokens`. */
export function kvBlockKey(parent: string, tokens: readonly number[]): string {
  return sha256('tandem-kv-block-1\n', parent, '\n', tokenBytes(tokens))
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0
}

/** The kv_blocks table; statements are prepared once here. */
export class KvBlockStore {
  private readonly now: () => number
  private readonly childrenStmt: Stmt
  private readonly dataStmt: Stmt
  private readonly putStmt: Stmt
  private readonly putDataStmt: Stmt
  private readonly touchStmt: Stmt
  private readonly deleteTreeStmt: Stmt
  private readonly usedStmt: Stmt
  private readonly oldestStmt: Stmt
  private readonly clearStmt: Stmt
  private readonly hasStmt: Stmt

  constructor(
    private readonly db: Db,
    options: StoreOptions = {}
  ) {
    this.now = options.now ?? Date.now
    this.childrenStmt = db.prepare('SELECT key, start, token_count, token_ids FROM kv_blocks WHERE parent = ? ORDER BY token_count DESC')
    this.dataStmt = db.prepare('SELECT b.key, d.data, b.checksum, b.bytes FROM kv_blocks b LEFT JOIN kv_block_data d ON d.block_n = b.n WHERE b.key = ?')
    this.putStmt = db.prepare(
      `INSERT INTO kv_blocks (key, parent, start, token_count, token_ids, checksum, bytes, created_at, last_used_at)
       VALUES (@key, @parent, @start, @tokenCount, @tokenIds, @checksum, @bytes, @now, @now)
       ON CONFLICT (key) DO NOTHING`
    )
    this.putDataStmt = db.prepare('INSERT INTO kv_block_data (block_n, data) VALUES (?, ?)')
    this.touchStmt = db.prepare('UPDATE kv_blocks SET last_used_at = ? WHERE key = ?')
    this.deleteTreeStmt = db.prepare(
      `WITH RECURSIVE tree(key) AS (SELECT ? UNION ALL SELECT b.key FROM kv_blocks b JOIN tree ON b.parent = tree.key)
       DELETE FROM kv_blocks WHERE key IN (SELECT key FROM tree)`
    )
    this.usedStmt = db.prepare('SELECT coalesce(sum(bytes), 0) AS used, count(*) AS blocks FROM kv_blocks')
    this.oldestStmt = db.prepare('SELECT key FROM kv_blocks ORDER BY last_used_at, n LIMIT 1')
    this.clearStmt = db.prepare('DELETE FROM kv_blocks')
    this.hasStmt = db.prepare('SELECT 1 FROM kv_blocks WHERE key = ?')
  }

  /** Whether the block with this key is stored (a save skips what an earlier one wrote). */
  has(key: string): boolean {
    return this.hasStmt.get(key) !== undefined
  }

  /**
   * Stores the block continuing `parent` (a root or block key) at position `start` with `tokens` and their KV
   * `data`, or only marks it used when it is already stored (same key: same prefix, same model); returns its key.
   */
  put(parent: string, start: number, tokens: readonly number[], data: Uint8Array): string {
    if (tokens.length === 0 || tokens.length > MAX_KV_BLOCK_TOKENS) throw new RangeError(`a KV block holds 1..${MAX_KV_BLOCK_TOKENS} tokens, got ${tokens.length}`)
    if (!Number.isInteger(start) || start < 0) throw new RangeError(`a KV block's start must be a non-negative integer, got ${start}`)
    if (data.byteLength === 0 || data.byteLength > MAX_KV_BLOCK_BYTES) throw new RangeError(`a KV block's data must be 1..${MAX_KV_BLOCK_BYTES} bytes, got ${data.byteLength}`)
    const key = kvBlockKey(parent, tokens)
    const now = this.now()
    const checksum = checksumOf(data)
    // one transaction: a block is stored with its data or not at all
    this.db.transaction(() => {
      const r = this.putStmt.run({ key, parent, start, tokenCount: tokens.length, tokenIds: tokenBytes(tokens), checksum, bytes: data.byteLength, now })
      if (r.changes === 1) this.putDataStmt.run(r.lastInsertRowid, data)
      else this.touchStmt.run(now, key)
    })()
    return key
  }

  /**
   * The longest chain of stored blocks from `root` that `tokens` begins with (token ids compared exactly), marked
   * used. The data is read block by block with `read`, so a restore can load one block while it reads the next.
   */
  match(root: string, tokens: readonly number[]): KvMatch {
    const blocks: KvBlockRef[] = []
    const problems: string[] = []
    let parent = root
    let at = 0
    for (;;) {
      const next = this.nextBlock(parent, tokens, at)
      if (next === null) break
      if (next.start !== at) {
        problems.push(`KV block at tokens ${at}..${at + next.tokenCount}: stored for position ${next.start}`)
        this.deleteTreeStmt.run(next.key)
        break
      }
      blocks.push(next)
      at += next.tokenCount
      parent = next.key
    }
    const now = this.now()
    if (blocks.length > 0) this.db.transaction(() => blocks.forEach((b) => this.touchStmt.run(now, b.key)))()
    return { blocks, tokens: at, problems }
  }

  /**
   * The data of a matched block if it is whole, `expectedBytes` long and matches its checksum; otherwise the reason
   * it is not, and the block is deleted with its descendants (the caller computes those positions).
   */
  read(block: KvBlockRef, expectedBytes: number): Uint8Array | string {
    const data = this.readData(block.key, expectedBytes)
    if (typeof data === 'string') {
      this.deleteTreeStmt.run(block.key)
      return `KV block at tokens ${block.start}..${block.start + block.tokenCount}: ${data}`
    }
    return data
  }

  /** Bytes of block data stored, and the number of blocks. */
  usage(): { bytes: number; blocks: number } {
    const row = new RowReader('kv_blocks', this.usedStmt.get())
    return { bytes: row.int('used'), blocks: row.int('blocks') }
  }

  /** Removes least recently used blocks (with their descendants) until at most `budgetBytes` remain; returns blocks removed. */
  evictTo(budgetBytes: number): number {
    let removed = 0
    while (this.usage().bytes > budgetBytes) {
      const oldest = this.oldestStmt.get()
      if (oldest === undefined) break
      removed += this.deleteTreeStmt.run(new RowReader('kv_blocks', oldest, 'key').text('key')).changes
    }
    return removed
  }

  /**
   * Removes every block and gives the space back to the disk (VACUUM, then a WAL checkpoint: otherwise the freed
   * pages would only be reused by later writes); returns how many blocks there were. Not inside a transaction.
   */
  clear(): number {
    const removed = this.clearStmt.run().changes
    this.db.exec('VACUUM')
    this.db.pragma('wal_checkpoint(TRUNCATE)')
    return removed
  }

  /** The longest stored child of `parent` whose token ids are `tokens[at..]`'s next ones, or null. */
  private nextBlock(parent: string, tokens: readonly number[], at: number): KvBlockRef | null {
    for (const raw of this.childrenStmt.iterate(parent)) {
      const row = new RowReader('kv_blocks', raw, 'key')
      const count = row.int('token_count')
      if (count > tokens.length - at) continue
      if (!sameBytes(row.blob('token_ids'), tokenBytes(tokens.slice(at, at + count)))) continue
      // the ids matched, so the key must be what they hash to: anything else is a row not written by put()
      const key = row.text('key')
      if (key !== kvBlockKey(parent, tokens.slice(at, at + count))) continue
      return { key, start: row.int('start'), tokenCount: count }
    }
    return null
  }

  /** The block's data if it is whole and matches its checksum, else the reason it does not. */
  private readData(key: string, expectedBytes: number): Uint8Array | string {
    const raw = this.dataStmt.get(key)
    if (raw === undefined) return 'gone'
    const row = new RowReader('kv_blocks', raw, 'key')
    if (isRecord(raw) && raw.data === null) return 'its data is missing'
    // a STRICT BLOB column can hold only blobs, but substr() or a damaged page can shorten one
    const data = row.blob('data')
    const bytes = row.int('bytes')
    if (data.byteLength !== bytes) return `truncated: ${data.byteLength} of ${bytes} bytes`
    if (data.byteLength !== expectedBytes) return `${data.byteLength} bytes where this model's layout needs ${expectedBytes}`
    if (checksumOf(data) !== row.text('checksum')) return 'checksum mismatch'
    return data
  }
}
