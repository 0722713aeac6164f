/**
 * @file Full-text search over titles and message content: FTS5 finds and ranks the rows, search-query.ts
 * cuts the snippets. Works on any connection to the file, so the search worker (search-worker.ts) runs the
 * same code on its own read-only connection.
 */
import type { Db, Stmt } from './database'
import { RowReader } from './rows'
import { highlight, MAX_SEARCH_LIMIT, parseQuery, SNIPPET_SCAN_CHARS, snippet } from './search-query'
import type { SearchHit } from './types'

/**
 * Bytes of a message read for its snippet: enough for SNIPPET_SCAN_CHARS UTF-16 units at 3 UTF-8 bytes each
 * (a surrogate pair is 4 bytes for 2 units), and then at least one unit more, so a cut text is longer than
 * the scan and the snippet knows it goes on.
 */
const HEAD_BYTES = SNIPPET_SCAN_CHARS * 3 + 3

/** The search statements, prepared once on one connection. */
export class SearchIndex {
  private readonly titlesStmt: Stmt
  private readonly messagesStmt: Stmt

  constructor(db: Db) {
    this.titlesStmt = db.prepare(
      `SELECT c.id AS conversation_id, c.title AS title
       FROM conversations_fts JOIN conversations c ON c.n = conversations_fts.rowid
       WHERE conversations_fts MATCH @query AND c.deleted_at IS NULL
       ORDER BY conversations_fts.rank LIMIT @limit`
    )
    // Only the head of each message is read (see SNIPPET_SCAN_CHARS). It is cut as bytes: substr() on TEXT
    // stops at a NUL character, which would cut the snippet short. A UTF-8 sequence cut in half at the end
    // reads as U+FFFD, past the part the snippet scans.
    this.messagesStmt = db.prepare(
      `SELECT c.id AS conversation_id, c.title AS title, m.id AS message_id,
              CAST(substr(CAST(m.content AS BLOB), 1, @scanBytes) AS TEXT) AS head
       FROM messages_fts
         JOIN messages m ON m.n = messages_fts.rowid
         JOIN conversations c ON c.id = m.conversation_id
       WHERE messages_fts MATCH @query AND c.deleted_at IS NULL
       ORDER BY messages_fts.rank LIMIT @limit`
    )
  }

  /**
   * Title hits (messageId null) first, then message hits, each group best match first; at most `limit`.
   * Any input is safe: it is reduced to quoted prefix words (search-query.ts); input without a word returns [].
   */
  search(query: string, limit: number): SearchHit[] {
    if (!(Number.isSafeInteger(limit) && limit >= 0 && limit <= MAX_SEARCH_LIMIT)) {
      throw new RangeError(`limit must be an integer in [0, ${MAX_SEARCH_LIMIT}], got ${limit}`)
    }
    const parsed = parseQuery(query)
    if (parsed === null || limit === 0) return []
    const hits = this.titlesStmt.all({ query: parsed.fts, limit }).map((row): SearchHit => {
      const r = new RowReader('conversations', row, 'conversation_id')
      const title = r.text('title')
      return { conversationId: r.text('conversation_id'), title, messageId: null, snippet: highlight(title, parsed) }
    })
    if (hits.length >= limit) return hits
    for (const row of this.messagesStmt.all({ query: parsed.fts, limit: limit - hits.length, scanBytes: HEAD_BYTES })) {
      const r = new RowReader('messages', row, 'message_id')
      hits.push({
        conversationId: r.text('conversation_id'),
        title: r.text('title'),
        messageId: r.text('message_id'),
        snippet: snippet(r.text('head'), parsed)
      })
    }
    return hits
  }
}
