/**
 * @file Conversations added whole, as an export file holds them (ids, times, stats, branch links, summarized files),
 * in one transaction: a file that fails anywhere adds nothing. The FTS triggers index the inserted titles and
 * messages like any others, so imported conversations are found by search at once.
 */
import { randomUUID } from 'node:crypto'
import type { Db, Stmt } from './database'
import { RowReader } from './rows'
import { samplingToJson } from './conversations'
import { checkDocument, sha256Hex } from './documents'
import { statsToJson } from './stats'
import type { MessageRole, MessageStats } from './types'

/** A message to add with everything it had; 'streaming' is not accepted (nothing is writing it here). */
export interface ImportedMessage {
  readonly id: string
  readonly seq: number
  readonly role: MessageRole
  readonly content: string
  readonly status: 'complete' | 'stopped' | 'error'
  readonly error: string | null
  readonly createdAtMs: number
  readonly updatedAtMs: number
  readonly stats: MessageStats | null
}

/** A summarized file to add with its conversation. */
export interface ImportedDocument {
  readonly name: string
  readonly type: string
  readonly bytes: number
  readonly sha256: string
  readonly text: string
  readonly createdAtMs: number
}

/** A conversation to add; messages in seq order, each seq once. */
export interface ImportedConversation {
  readonly id: string
  readonly title: string
  readonly systemPrompt: string
  readonly modelId: string | null
  /** sampling overrides, a plain JSON object */
  readonly sampling: object
  readonly createdAtMs: number
  readonly updatedAtMs: number
  /** kept when that conversation is imported too or is in the database, else dropped (null) */
  readonly parentId: string | null
  readonly branchSeq: number | null
  readonly messages: readonly ImportedMessage[]
  readonly document: ImportedDocument | null
}

/** What an import did, by conversation id, in input order. */
export interface ImportOutcome {
  readonly imported: readonly string[]
  /** already in the database and not deleted: left untouched */
  readonly duplicates: readonly string[]
}

/** Adds exported conversations; statements are prepared once here. */
export class ConversationImportStore {
  private readonly deletedAtStmt: Stmt
  private readonly insertStmt: Stmt
  private readonly replaceStmt: Stmt
  private readonly clearMessagesStmt: Stmt
  private readonly clearDocumentStmt: Stmt
  private readonly messageExistsStmt: Stmt
  private readonly insertMessageStmt: Stmt
  private readonly insertDocumentStmt: Stmt
  private readonly parentOfStmt: Stmt
  private readonly setParentStmt: Stmt
  private readonly importTx: (conversations: readonly ImportedConversation[]) => ImportOutcome

  constructor(db: Db) {
    this.deletedAtStmt = db.prepare('SELECT deleted_at FROM conversations WHERE id = ?')
    // Parents are linked after every conversation of the file is in (see linkParents), so file order does not matter.
    this.insertStmt = db.prepare(
      `INSERT INTO conversations (id, title, system_prompt, model_id, sampling_json, created_at, updated_at, parent_id, branch_seq)
       VALUES (@id, @title, @systemPrompt, @modelId, @samplingJson, @createdAtMs, @updatedAtMs, NULL, @branchSeq)`
    )
    // A deleted conversation is replaced in place: its row (and rowid) stays, so branches of it keep their link.
    this.replaceStmt = db.prepare(
      `UPDATE conversations SET title = @title, system_prompt = @systemPrompt, model_id = @modelId, sampling_json = @samplingJson,
         created_at = @createdAtMs, updated_at = @updatedAtMs, deleted_at = NULL, parent_id = NULL, branch_seq = @branchSeq
       WHERE id = @id`
    )
    this.clearMessagesStmt = db.prepare('DELETE FROM messages WHERE conversation_id = ?')
    this.clearDocumentStmt = db.prepare('DELETE FROM documents WHERE conversation_id = ?')
    this.messageExistsStmt = db.prepare('SELECT 1 FROM messages WHERE id = ?').pluck()
    this.insertMessageStmt = db.prepare(
      `INSERT INTO messages (id, conversation_id, seq, role, content, status, error, created_at, updated_at, stats_json)
       VALUES (@id, @conversationId, @seq, @role, @content, @status, @error, @createdAtMs, @updatedAtMs, @statsJson)`
    )
    this.insertDocumentStmt = db.prepare(
      `INSERT INTO documents (conversation_id, name, type, bytes, sha256, text, text_sha256, created_at)
       VALUES (@conversationId, @name, @type, @bytes, @sha256, @text, @textSha256, @createdAtMs)`
    )
    this.parentOfStmt = db.prepare('SELECT parent_id FROM conversations WHERE id = ?').pluck()
    this.setParentStmt = db.prepare('UPDATE conversations SET parent_id = @parentId WHERE id = @id')
    this.importTx = db.transaction((conversations: readonly ImportedConversation[]): ImportOutcome => {
      const imported: ImportedConversation[] = []
      const duplicates: string[] = []
      for (const c of conversations) {
        if (this.add(c)) imported.push(c)
        else duplicates.push(c.id)
      }
      this.linkParents(imported)
      return { imported: imported.map((c) => c.id), duplicates }
    })
  }

  /**
   * Adds the conversations in one transaction (any error adds none). One whose id is in the database and not
   * deleted is a duplicate and left as it is; a deleted one (restorable, not yet purged) is replaced by the
   * imported one. A message id already used elsewhere gets a new id (nothing refers to message ids across
   * conversations). Throws (and adds nothing) for what the schema refuses, stats that are not finite (RangeError), or
   * a document with a malformed sha256 or size (RangeError).
   */
  importAll(conversations: readonly ImportedConversation[]): ImportOutcome {
    return this.importTx(conversations)
  }

  /** Adds one conversation with its messages and file; false when it is a duplicate. */
  private add(c: ImportedConversation): boolean {
    const existing = this.deletedAtStmt.get(c.id)
    const row = {
      id: c.id,
      title: c.title,
      systemPrompt: c.systemPrompt,
      modelId: c.modelId,
      samplingJson: samplingToJson(c.sampling),
      createdAtMs: c.createdAtMs,
      updatedAtMs: c.updatedAtMs,
      branchSeq: c.branchSeq
    }
    if (existing === undefined) {
      this.insertStmt.run(row)
    } else {
      if (new RowReader('conversations', existing).intOrNull('deleted_at') === null) return false
      this.replaceStmt.run(row)
      this.clearMessagesStmt.run(c.id)
      this.clearDocumentStmt.run(c.id)
    }
    for (const m of c.messages) {
      // the message's own fields are the statement's parameters (better-sqlite3 ignores the others, `stats`)
      this.insertMessageStmt.run({
        ...m,
        id: this.messageExistsStmt.get(m.id) === undefined ? m.id : randomUUID(),
        conversationId: c.id,
        statsJson: m.stats === null ? null : statsToJson(m.stats)
      })
    }
    const d = c.document
    if (d !== null) {
      checkDocument(d)
      this.insertDocumentStmt.run({ conversationId: c.id, name: d.name, type: d.type, bytes: d.bytes, sha256: d.sha256, text: d.text, textSha256: sha256Hex(d.text), createdAtMs: d.createdAtMs })
    }
    return true
  }

  /**
   * Links each added conversation to its parent when that exists now (added too, or already here, deleted or not).
   * A link that would close a loop (a file naming each other as parents, or a replaced deleted conversation whose
   * branch is named as its parent) is dropped: the list nests branches under parents and must reach a top.
   */
  private linkParents(added: readonly ImportedConversation[]): void {
    for (const c of added) {
      if (c.parentId === null || this.deletedAtStmt.get(c.parentId) === undefined || this.reaches(c.parentId, c.id)) continue
      this.setParentStmt.run({ id: c.id, parentId: c.parentId })
    }
  }

  /** Whether following parent links up from `start` arrives at `target` (start itself included). */
  private reaches(start: string, target: string): boolean {
    const seen = new Set<string>()
    for (let id: unknown = start; typeof id === 'string' && !seen.has(id); id = this.parentOfStmt.get(id)) {
      if (id === target) return true
      seen.add(id)
    }
    return false
  }
}
