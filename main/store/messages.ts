/**
 * @file Messages of a conversation, in `seq` order.
 *
 * Streaming has one path: the chat service rewrites a 'streaming' message's whole content with setContent,
 * throttled (PERSIST_INTERVAL_MS in chat-service.ts), and finishes it with update(). Each rewrite is one
 * small transaction, so a crash leaves the last committed prefix of the reply; markInterrupted() at the
 * next start turns it into a 'stopped' message, which is also when the full-text index picks it up.
 */
import { randomUUID } from 'node:crypto'
import type { Db, Stmt } from './database'
import { StoreDataError, StoreNotFoundError } from './errors'
import { isRecord } from '../common/reader'
import { RowReader } from './rows'
import { statsFromJson, statsToJson } from './stats'
import { MESSAGE_ROLES, MESSAGE_STATUSES, type Message, type MessagePatch, type NewMessage, type StoreOptions } from './types'
import { errorCode } from '../common/error-code'

/** The error text of a message whose row could not be read (shown in its place, status 'error', no content). */
export const DAMAGED_MESSAGE_ERROR = 'This message is damaged and could not be read.'

/** Columns of a Message. */
const COLUMNS = 'm.id, m.conversation_id, m.seq, m.role, m.content, m.status, m.error, m.created_at, m.updated_at, m.stats_json'

/** Messages table access; statements are prepared once here. */
export class MessageStore {
  private readonly now: () => number
  private readonly conversationExistsStmt: Stmt
  private readonly nextSeqStmt: Stmt
  private readonly insertStmt: Stmt
  private readonly touchConversationStmt: Stmt
  private readonly getStmt: Stmt
  private readonly listRowsStmt: Stmt
  private readonly getByRowStmt: Stmt
  private readonly rawRowStmt: Stmt
  private readonly setContentStmt: Stmt
  private readonly updateStmt: Stmt
  private readonly deleteAfterStmt: Stmt
  private readonly stopStreamingStmt: Stmt
  private readonly appendTx: (input: NewMessage) => string
  private readonly updateTx: (id: string, patch: MessagePatch) => void
  private readonly deleteAfterTx: (conversationId: string, seq: number) => number

  constructor(db: Db, options: StoreOptions = {}) {
    this.now = options.now ?? Date.now
    this.conversationExistsStmt = db.prepare('SELECT 1 FROM conversations WHERE id = ?').pluck()
    this.nextSeqStmt = db.prepare('SELECT COALESCE(MAX(seq), -1) + 1 FROM messages WHERE conversation_id = ?').pluck()
    this.insertStmt = db.prepare(
      `INSERT INTO messages (id, conversation_id, seq, role, content, status, error, created_at, updated_at, stats_json)
       VALUES (@id, @conversationId, @seq, @role, @content, @status, @error, @nowMs, @nowMs, @statsJson)`
    )
    this.touchConversationStmt = db.prepare('UPDATE conversations SET updated_at = @nowMs WHERE id = @id')
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM messages m WHERE m.id = ?`)
    // list() reads the order from the (conversation_id, seq) index, then each row on its own, so one bad
    // row cannot hide the others.
    this.listRowsStmt = db.prepare('SELECT n FROM messages WHERE conversation_id = ? ORDER BY seq').pluck()
    this.getByRowStmt = db.prepare(`SELECT ${COLUMNS} FROM messages m WHERE m.n = ?`)
    this.rawRowStmt = db.prepare('SELECT id, seq, role, created_at, updated_at FROM messages WHERE n = ?')
    this.setContentStmt = db.prepare('UPDATE messages SET content = @content, updated_at = @nowMs WHERE id = @id')
    // One statement for any patch: @hasX (0/1) says whether the field is being set.
    this.updateStmt = db.prepare(
      `UPDATE messages SET
         content = CASE WHEN @hasContent THEN @content ELSE content END,
         status = CASE WHEN @hasStatus THEN @status ELSE status END,
         error = CASE WHEN @hasError THEN @error ELSE error END,
         stats_json = CASE WHEN @hasStats THEN @statsJson ELSE stats_json END,
         updated_at = @nowMs
       WHERE id = @id
       RETURNING conversation_id`
    ).pluck()
    this.deleteAfterStmt = db.prepare('DELETE FROM messages WHERE conversation_id = ? AND seq > ?')
    this.stopStreamingStmt = db.prepare("UPDATE messages SET status = 'stopped', updated_at = @nowMs WHERE status = 'streaming'")

    this.appendTx = db.transaction((input: NewMessage): string => {
      if (this.conversationExistsStmt.get(input.conversationId) === undefined) {
        throw new StoreNotFoundError('conversation', input.conversationId)
      }
      const seq = this.nextSeqStmt.get(input.conversationId)
      if (typeof seq !== 'number' || !Number.isSafeInteger(seq)) {
        throw new StoreDataError('messages', undefined, `next seq of conversation ${input.conversationId} is ${String(seq)}`)
      }
      const id = randomUUID()
      const nowMs = this.now()
      this.insertStmt.run({
        id,
        conversationId: input.conversationId,
        seq,
        role: input.role,
        content: input.content ?? '',
        status: input.status ?? 'complete',
        error: input.error ?? null,
        nowMs,
        statsJson: input.stats == null ? null : statsToJson(input.stats)
      })
      this.touchConversationStmt.run({ id: input.conversationId, nowMs })
      return id
    })
    this.updateTx = db.transaction((id: string, patch: MessagePatch): void => {
      const nowMs = this.now()
      const conversationId = this.updateStmt.get({
        id,
        nowMs,
        hasContent: patch.content === undefined ? 0 : 1,
        content: patch.content ?? null,
        hasStatus: patch.status === undefined ? 0 : 1,
        status: patch.status ?? null,
        hasError: patch.error === undefined ? 0 : 1,
        error: patch.error ?? null,
        hasStats: patch.stats === undefined ? 0 : 1,
        statsJson: patch.stats == null ? null : statsToJson(patch.stats)
      })
      if (typeof conversationId !== 'string') throw new StoreNotFoundError('message', id)
      this.touchConversationStmt.run({ id: conversationId, nowMs })
    })
    this.deleteAfterTx = db.transaction((conversationId: string, seq: number): number => {
      const deleted = this.deleteAfterStmt.run(conversationId, seq).changes
      if (deleted > 0) this.touchConversationStmt.run({ id: conversationId, nowMs: this.now() })
      return deleted
    })
  }

  /** Appends a message after the conversation's last one (seq = last + 1) and bumps the conversation's updatedAtMs. */
  append(input: NewMessage): Message {
    return this.mustGet(this.appendTx(input))
  }

  /** The message, or undefined if there is none with this id. */
  get(id: string): Message | undefined {
    const row = this.getStmt.get(id)
    return row === undefined ? undefined : toMessage(row)
  }

  /**
   * All messages of a conversation in seq order (empty for an unknown conversation). A row that cannot be
   * read (a corrupt file: a wrong-typed column, a status outside the schema's list, an unreadable page) is
   * listed in its place as a damaged message — status 'error', error DAMAGED_MESSAGE_ERROR, no content —
   * so the rest of the conversation still opens.
   */
  list(conversationId: string): Message[] {
    return this.listRowsStmt.all(conversationId).map((n, index) => {
      try {
        const row = this.getByRowStmt.get(n)
        if (row !== undefined) return toMessage(row)
      } catch (err) {
        if (!(err instanceof StoreDataError || isSqliteError(err))) throw err
      }
      return this.damaged(n, conversationId, index)
    })
  }

  /**
   * Replaces the whole content: how a streaming reply is saved while it grows. One statement, so it commits
   * whole or not at all; it costs time proportional to the length, which is why the chat service throttles
   * it. The message's status is left as it is, so a streaming reply stays out of the search index.
   */
  setContent(id: string, content: string): void {
    if (this.setContentStmt.run({ id, content, nowMs: this.now() }).changes === 0) throw new StoreNotFoundError('message', id)
  }

  /** Changes the fields present in `patch` (e.g. status + stats when a reply finishes) and returns the message. */
  update(id: string, patch: MessagePatch): Message {
    this.updateTx(id, patch)
    return this.mustGet(id)
  }

  /** Deletes the conversation's messages with seq > `seq` (regenerate / edit); returns how many. */
  deleteAfter(conversationId: string, seq: number): number {
    if (!Number.isSafeInteger(seq)) throw new RangeError(`seq must be an integer, got ${seq}`)
    return this.deleteAfterTx(conversationId, seq)
  }

  /**
   * Marks every 'streaming' message 'stopped' and returns how many; call once at startup, when no generation
   * can be running, so replies cut off by a crash show as stopped (and become searchable).
   */
  markInterrupted(): number {
    return this.stopStreamingStmt.run({ nowMs: this.now() }).changes
  }

  /** What can still be read of row `n`, as a damaged message (made-up id and times where they are unreadable). */
  private damaged(n: unknown, conversationId: string, index: number): Message {
    let row: unknown
    try {
      row = this.rawRowStmt.get(n)
    } catch {
      row = undefined
    }
    const r = isRecord(row) ? row : {}
    const int = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isSafeInteger(v) ? v : fallback)
    const role = MESSAGE_ROLES.find((x) => x === r.role) ?? 'assistant'
    return {
      id: typeof r.id === 'string' ? r.id : `damaged-${String(n)}`,
      conversationId,
      seq: int(r.seq, index),
      role,
      content: '',
      status: 'error',
      error: DAMAGED_MESSAGE_ERROR,
      createdAtMs: int(r.created_at, 0),
      updatedAtMs: int(r.updated_at, 0),
      stats: null
    }
  }

  private mustGet(id: string): Message {
    const m = this.get(id)
    if (m === undefined) throw new StoreNotFoundError('message', id)
    return m
  }
}

/** A `messages` row as a Message; throws StoreDataError for a malformed row (corrupt stats read as null). */
function toMessage(row: unknown): Message {
  const r = new RowReader('messages', row)
  return {
    id: r.text('id'),
    conversationId: r.text('conversation_id'),
    seq: r.int('seq'),
    role: r.oneOf('role', MESSAGE_ROLES),
    content: r.text('content'),
    status: r.oneOf('status', MESSAGE_STATUSES),
    error: r.textOrNull('error'),
    createdAtMs: r.int('created_at'),
    updatedAtMs: r.int('updated_at'),
    stats: statsFromJson(r.textOrNull('stats_json'))
  }
}

/** An error raised by SQLite (SQLITE_CORRUPT and the like) rather than by our own checks. */
function isSqliteError(err: unknown): boolean {
  return errorCode(err)?.startsWith('SQLITE_') === true
}
