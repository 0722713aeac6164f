/**
 * @file Conversations: create, read, edit, soft delete (so the UI can undo) with a later purge, and
 * full-text search over titles and message content. All methods are synchronous; call them between awaits.
 */
import { randomUUID } from 'node:crypto'
import type { Db, Stmt } from './database'
import { StoreDataError, StoreNotFoundError } from './errors'
import { isRecord } from '../common/reader'
import { parseJson, RowReader, toJsonObject, type JsonObject } from './rows'
import { SearchIndex } from './search'
import type { Conversation, NewConversation, SearchHit, StoreOptions } from './types'

const COLUMNS = 'id, title, system_prompt, model_id, sampling_json, created_at, updated_at, deleted_at, parent_id, branch_seq'

/** Conversations table access; statements are prepared once here. */
export class ConversationStore {
  private readonly now: () => number
  private readonly insertStmt: Stmt
  private readonly getStmt: Stmt
  private readonly listStmt: Stmt
  private readonly renameStmt: Stmt
  private readonly systemPromptStmt: Stmt
  private readonly modelStmt: Stmt
  private readonly samplingStmt: Stmt
  private readonly softDeleteStmt: Stmt
  private readonly restoreStmt: Stmt
  private readonly purgeStmt: Stmt
  private readonly branchStmt: Stmt
  private readonly branchCheckStmt: Stmt
  private readonly branchMessagesStmt: Stmt
  private readonly copyMessageStmt: Stmt
  private readonly copyDocumentStmt: Stmt
  private readonly searchIndex: SearchIndex

  constructor(
    private readonly db: Db,
    options: StoreOptions = {}
  ) {
    this.now = options.now ?? Date.now
    this.insertStmt = db.prepare(
      `INSERT INTO conversations (id, title, system_prompt, model_id, sampling_json, created_at, updated_at)
       VALUES (@id, @title, @systemPrompt, @modelId, @samplingJson, @nowMs, @nowMs)`
    )
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM conversations WHERE id = ?`)
    // LIMIT -1 means no limit in SQLite. The n tie-break keeps the order stable for equal timestamps.
    this.listStmt = db.prepare(
      `SELECT ${COLUMNS} FROM conversations WHERE deleted_at IS NULL ORDER BY updated_at DESC, n DESC LIMIT ?`
    )
    this.renameStmt = db.prepare('UPDATE conversations SET title = @value, updated_at = @nowMs WHERE id = @id')
    this.systemPromptStmt = db.prepare('UPDATE conversations SET system_prompt = @value, updated_at = @nowMs WHERE id = @id')
    this.modelStmt = db.prepare('UPDATE conversations SET model_id = @value, updated_at = @nowMs WHERE id = @id')
    this.samplingStmt = db.prepare('UPDATE conversations SET sampling_json = @value, updated_at = @nowMs WHERE id = @id')
    // COALESCE keeps the first deletion time, so deleting twice does not postpone the purge.
    this.softDeleteStmt = db.prepare('UPDATE conversations SET deleted_at = COALESCE(deleted_at, @nowMs) WHERE id = @id')
    this.restoreStmt = db.prepare('UPDATE conversations SET deleted_at = NULL WHERE id = ?')
    // Messages go with them through ON DELETE CASCADE; the FTS triggers clean both indexes.
    this.purgeStmt = db.prepare('DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at <= ?')
    this.branchStmt = db.prepare(
      `INSERT INTO conversations (id, title, system_prompt, model_id, sampling_json, created_at, updated_at, parent_id, branch_seq)
       SELECT @id, @title, system_prompt, model_id, sampling_json, @nowMs, @nowMs, id, @seq FROM conversations WHERE id = @parentId`
    )
    this.branchCheckStmt = db.prepare(
      `SELECT (SELECT count(*) FROM messages WHERE conversation_id = @parentId AND seq = @seq) AS found,
              (SELECT count(*) FROM messages WHERE conversation_id = @parentId AND seq <= @seq AND status = 'streaming') AS streaming`
    )
    this.branchMessagesStmt = db.prepare('SELECT n FROM messages WHERE conversation_id = ? AND seq <= ? ORDER BY seq').pluck()
    // content, status, stats and times travel with the copy; the id is new, like every message's
    this.copyMessageStmt = db.prepare(
      `INSERT INTO messages (id, conversation_id, seq, role, content, status, error, created_at, updated_at, stats_json)
       SELECT @newId, @conversationId, seq, role, content, status, error, created_at, updated_at, stats_json FROM messages WHERE n = @n`
    )
    // a branch of a summarized file keeps the file, so its follow-up questions are answered from it too
    this.copyDocumentStmt = db.prepare(
      `INSERT INTO documents (conversation_id, name, type, bytes, sha256, text, text_sha256, created_at)
       SELECT @id, name, type, bytes, sha256, text, text_sha256, created_at FROM documents WHERE conversation_id = @parentId`
    )
    this.searchIndex = new SearchIndex(db)
  }

  /**
   * A new conversation that starts as a copy of `parentId` up to and including its message `seq` (same system
   * prompt, model and sampling), linked to the parent; in one transaction. Throws StoreNotFoundError for an unknown
   * parent, RangeError for a seq the parent does not have or a message still streaming in the copied part.
   */
  branch(parentId: string, seq: number, title: string): Conversation {
    if (!Number.isSafeInteger(seq) || seq < 0) throw new RangeError(`seq must be a non-negative integer, got ${seq}`)
    const id = randomUUID()
    this.db.transaction(() => {
      this.mustGet(parentId)
      const check = new RowReader('messages', this.branchCheckStmt.get({ parentId, seq }))
      if (check.int('found') === 0) throw new RangeError(`conversation ${parentId} has no message ${seq}`)
      if (check.int('streaming') > 0) throw new RangeError('a reply in the copied part is still being written')
      this.branchStmt.run({ id, title, nowMs: this.now(), parentId, seq })
      for (const n of this.branchMessagesStmt.all(parentId, seq)) this.copyMessageStmt.run({ newId: randomUUID(), conversationId: id, n })
      this.copyDocumentStmt.run({ id, parentId })
    })()
    return this.mustGet(id)
  }

  /** Creates a conversation and returns it. Throws TypeError if `sampling` is not a plain JSON object. */
  create(input: NewConversation = {}): Conversation {
    const id = randomUUID()
    this.insertStmt.run({
      id,
      title: input.title ?? '',
      systemPrompt: input.systemPrompt ?? '',
      modelId: input.modelId ?? null,
      samplingJson: samplingToJson(input.sampling ?? {}),
      nowMs: this.now()
    })
    return this.mustGet(id)
  }

  /** The conversation, soft-deleted or not; undefined if there is none with this id (or it was purged). */
  get(id: string): Conversation | undefined {
    const row = this.getStmt.get(id)
    return row === undefined ? undefined : toConversation(row)
  }

  /** Conversations not deleted, most recently updated first; `limit` undefined = all. */
  list(limit?: number): Conversation[] {
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0)) {
      throw new RangeError(`limit must be a non-negative integer, got ${limit}`)
    }
    // A row that cannot be read (a corrupt file) is left out rather than hiding every conversation.
    return this.listStmt.all(limit ?? -1).flatMap((row) => {
      try {
        return [toConversation(row)]
      } catch (err) {
        if (err instanceof StoreDataError) return []
        throw err
      }
    })
  }

  /** Sets the title. Throws StoreNotFoundError for an unknown id. */
  rename(id: string, title: string): Conversation {
    return this.update(this.renameStmt, id, title)
  }

  /** Sets the system prompt. */
  setSystemPrompt(id: string, systemPrompt: string): Conversation {
    return this.update(this.systemPromptStmt, id, systemPrompt)
  }

  /** Sets the model (null: the app default). */
  setModel(id: string, modelId: string | null): Conversation {
    return this.update(this.modelStmt, id, modelId)
  }

  /** Replaces the sampling overrides; throws TypeError if not a plain JSON object. */
  setSampling(id: string, sampling: object): Conversation {
    return this.update(this.samplingStmt, id, samplingToJson(sampling))
  }

  /** Hides the conversation from list/search; restore() undoes it until purgeDeleted() removes it. */
  softDelete(id: string): void {
    if (this.softDeleteStmt.run({ id, nowMs: this.now() }).changes === 0) throw new StoreNotFoundError('conversation', id)
  }

  /** Undoes softDelete (no-op for a conversation that is not deleted). */
  restore(id: string): void {
    if (this.restoreStmt.run(id).changes === 0) throw new StoreNotFoundError('conversation', id)
  }

  /** Permanently removes conversations (and their messages) soft-deleted at least `olderThanMs` ago; returns how many. */
  purgeDeleted(olderThanMs: number): number {
    if (!(Number.isFinite(olderThanMs) && olderThanMs >= 0)) {
      throw new RangeError(`olderThanMs must be a finite number ≥ 0, got ${olderThanMs}`)
    }
    return this.purgeStmt.run(Math.floor(this.now() - olderThanMs)).changes
  }

  /**
   * Full-text search over titles and (finished) message content of conversations not deleted. Any input is
   * safe: it is reduced to quoted prefix words (see search-query.ts); input without a word returns [].
   * Title hits come first (messageId null), then message hits, each group best match first; at most `limit`.
   */
  search(query: string, limit = 20): SearchHit[] {
    return this.searchIndex.search(query, limit)
  }

  private update(stmt: Stmt, id: string, value: string | null): Conversation {
    if (stmt.run({ id, value, nowMs: this.now() }).changes === 0) throw new StoreNotFoundError('conversation', id)
    return this.mustGet(id)
  }

  private mustGet(id: string): Conversation {
    const c = this.get(id)
    if (c === undefined) throw new StoreNotFoundError('conversation', id)
    return c
  }
}

/** Validates and serialises sampling overrides for `sampling_json`. */
export function samplingToJson(sampling: object): string {
  const obj = toJsonObject(sampling)
  if (obj === undefined) throw new TypeError('sampling must be a plain object of JSON values (finite numbers, strings, ...)')
  return JSON.stringify(obj)
}

/**
 * Reads `sampling_json`. A corrupt value (not JSON, or not an object) reads as {} — "no overrides", so the
 * app defaults apply — rather than making the conversation unreadable; the schema's CHECK prevents it anyway.
 */
function samplingFromJson(text: string): JsonObject {
  const value = parseJson(text)
  return (isRecord(value) ? toJsonObject(value) : undefined) ?? {}
}

/** A `conversations` row as a Conversation; throws StoreDataError for a malformed row. */
function toConversation(row: unknown): Conversation {
  const r = new RowReader('conversations', row)
  return {
    id: r.text('id'),
    title: r.text('title'),
    systemPrompt: r.text('system_prompt'),
    modelId: r.textOrNull('model_id'),
    sampling: samplingFromJson(r.text('sampling_json')),
    createdAtMs: r.int('created_at'),
    updatedAtMs: r.int('updated_at'),
    deletedAtMs: r.intOrNull('deleted_at'),
    parentId: r.textOrNull('parent_id'),
    branchSeq: r.intOrNull('branch_seq')
  }
}
