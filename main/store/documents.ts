/**
 * @file Files summarized into conversations (migration 6): one per conversation, with the text read from it. The
 * text is checked against its sha256 when read back, so a damaged row is an error naming the file, never a prompt
 * built from half a document.
 */
import { createHash } from 'node:crypto'
import type { Db, Stmt } from './database'
import { StoreDataError, StoreNotFoundError } from './errors'
import { RowReader } from './rows'
import type { StoreOptions } from './types'

/** What a conversation's file was. */
export interface DocumentRecord {
  readonly conversationId: string
  readonly name: string
  /** how its text was read ('pdf', 'docx', ...); the services know the names */
  readonly type: string
  readonly bytes: number
  /** sha256 of the file's bytes, hex */
  readonly sha256: string
  readonly textChars: number
  readonly createdAtMs: number
}

/** A file to attach: what it was and its text. */
export interface NewDocument {
  readonly name: string
  readonly type: string
  readonly bytes: number
  readonly sha256: string
  readonly text: string
}

/** The summary a file got before: its conversation and the reply holding it. */
export interface StoredSummary {
  readonly conversationId: string
  readonly messageId: string
}

const SHA256_HEX = /^[0-9a-f]{64}$/

/** The sha256 of text as UTF-8, hex: what `text_sha256` holds. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/** Throws RangeError unless the file's sha256 is 64 lower-case hex digits and its size a non-negative integer. */
export function checkDocument(doc: Pick<NewDocument, 'sha256' | 'bytes'>): void {
  if (!SHA256_HEX.test(doc.sha256)) throw new RangeError('sha256 must be 64 lower-case hex digits')
  if (!Number.isSafeInteger(doc.bytes) || doc.bytes < 0) throw new RangeError(`bytes must be a non-negative integer, got ${doc.bytes}`)
}

/** The documents table; statements are prepared once here. */
export class DocumentStore {
  private readonly now: () => number
  private readonly insertStmt: Stmt
  private readonly infoStmt: Stmt
  private readonly textStmt: Stmt
  private readonly summarizedStmt: Stmt

  constructor(db: Db, options: StoreOptions = {}) {
    this.now = options.now ?? Date.now
    this.insertStmt = db.prepare(
      `INSERT INTO documents (conversation_id, name, type, bytes, sha256, text, text_sha256, created_at)
       VALUES (@conversationId, @name, @type, @bytes, @sha256, @text, @textSha256, @nowMs)`
    )
    this.infoStmt = db.prepare('SELECT conversation_id, name, type, bytes, sha256, length(text) AS text_chars, created_at FROM documents WHERE conversation_id = ?')
    this.textStmt = db.prepare('SELECT name, text, text_sha256 FROM documents WHERE conversation_id = ?')
    // The summary is the conversation's first reply; only a finished one is offered again.
    this.summarizedStmt = db.prepare(
      `SELECT d.conversation_id AS conversation_id, m.id AS message_id
       FROM documents d
       JOIN conversations c ON c.id = d.conversation_id AND c.deleted_at IS NULL
       JOIN messages m ON m.conversation_id = d.conversation_id
         AND m.seq = (SELECT min(seq) FROM messages WHERE conversation_id = d.conversation_id AND role = 'assistant')
       WHERE d.sha256 = ? AND m.status = 'complete' AND m.content != ''
       ORDER BY d.created_at DESC, c.n DESC LIMIT 1`
    )
  }

  /** Attaches a file to a conversation (one each; a second is refused by the primary key). */
  attach(conversationId: string, doc: NewDocument): DocumentRecord {
    checkDocument(doc)
    this.insertStmt.run({ conversationId, name: doc.name, type: doc.type, bytes: doc.bytes, sha256: doc.sha256, text: doc.text, textSha256: sha256Hex(doc.text), nowMs: this.now() })
    const record = this.get(conversationId)
    if (record === undefined) throw new StoreNotFoundError('document', conversationId)
    return record
  }

  /** The conversation's file (without its text), or undefined. */
  get(conversationId: string): DocumentRecord | undefined {
    const row = this.infoStmt.get(conversationId)
    if (row === undefined) return undefined
    const r = new RowReader('documents', row)
    return {
      conversationId: r.text('conversation_id'),
      name: r.text('name'),
      type: r.text('type'),
      bytes: r.int('bytes'),
      sha256: r.text('sha256'),
      textChars: r.int('text_chars'),
      createdAtMs: r.int('created_at')
    }
  }

  /** The text of the conversation's file; StoreDataError when it no longer matches its hash, undefined without a file. */
  text(conversationId: string): string | undefined {
    const row = this.textStmt.get(conversationId)
    if (row === undefined) return undefined
    const r = new RowReader('documents', row)
    const text = r.text('text')
    if (sha256Hex(text) !== r.text('text_sha256')) {
      throw new StoreDataError('documents', conversationId, `the text of ${r.text('name')} is damaged (its checksum does not match)`)
    }
    return text
  }

  /** The newest finished summary of a file with these bytes in a conversation not deleted, or undefined. */
  findSummary(sha256: string): StoredSummary | undefined {
    const row = this.summarizedStmt.get(sha256)
    if (row === undefined) return undefined
    const r = new RowReader('documents', row)
    return { conversationId: r.text('conversation_id'), messageId: r.text('message_id') }
  }
}
