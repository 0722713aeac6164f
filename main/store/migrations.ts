/**
 * @file The schema, as numbered migrations. `PRAGMA user_version` holds the number of the last one applied;
 * `openDatabase` applies the missing ones in order, each in its own transaction. To change the schema, append
 * a migration with the next version — never edit one that has shipped, because existing files already ran it.
 */

/** One schema step: `sql` may hold several statements; it runs inside a transaction with `user_version = version`. */
export interface Migration {
  readonly version: number
  readonly name: string
  readonly sql: string
}

/**
 * Full-text tokenizer for messages and titles. unicode61 folds case and (remove_diacritics 2) accents, so
 * "cafe" finds "café". Its default token classes are letters, numbers and private use; adding marks (M*)
 * keeps words with combining accents whole and symbols (So) makes emoji searchable. Scripts written without
 * spaces (Chinese, Japanese) become one token per run, so they match by prefix only.
 */
const TOKENIZE = `tokenize = "unicode61 remove_diacritics 2 categories 'L* N* Co M* So'"`

/**
 * The full-text indexes, by name: the statement that creates each (as v1 ran it). They hold derived data
 * only (external-content tables over messages_searchable and conversations), so repair.ts may drop a
 * damaged one, create it again with this statement and rebuild it from its content.
 */
export const FTS_INDEXES = Object.freeze({
  messages_fts: `CREATE VIRTUAL TABLE messages_fts USING fts5 (
  content, content = 'messages_searchable', content_rowid = 'n', ${TOKENIZE}
)`,
  conversations_fts: `CREATE VIRTUAL TABLE conversations_fts USING fts5 (
  title, content = 'conversations', content_rowid = 'n', ${TOKENIZE}
)`
})

/**
 * v1: conversations, messages, settings, and FTS5 indexes over message content and conversation titles.
 *
 * Why each table has `n INTEGER PRIMARY KEY` beside its `id TEXT UNIQUE`: the FTS5 indexes are
 * external-content tables keyed by rowid, and VACUUM may renumber implicit rowids of tables without an
 * INTEGER PRIMARY KEY, which would silently point the index at the wrong rows. In a rowid table a
 * `TEXT PRIMARY KEY` is just a unique index, so `id TEXT NOT NULL UNIQUE` costs the same.
 *
 * Messages still streaming are kept out of the message index (through the `messages_searchable` view):
 * streaming appends rewrite the content many times a second, and re-indexing the whole text on each would
 * cost time proportional to its length. The index picks a message up when its status leaves 'streaming'.
 */
const V1_SQL = `
CREATE TABLE conversations (
  n INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  system_prompt TEXT NOT NULL,
  model_id TEXT,
  sampling_json TEXT NOT NULL CHECK (json_valid(sampling_json) AND json_type(sampling_json) = 'object'),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  deleted_at INTEGER
) STRICT;
CREATE INDEX conversations_recent ON conversations (updated_at DESC, n DESC) WHERE deleted_at IS NULL;
CREATE INDEX conversations_deleted ON conversations (deleted_at) WHERE deleted_at IS NOT NULL;

CREATE TABLE messages (
  n INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
  content TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('complete', 'streaming', 'stopped', 'error')),
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  stats_json TEXT CHECK (stats_json IS NULL OR json_valid(stats_json)),
  -- Also the index the ON DELETE CASCADE lookup and the per-conversation listing use.
  UNIQUE (conversation_id, seq)
) STRICT;
CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';

-- Text streamed into a message, one row per appendContent, folded into messages.content when the message
-- leaves 'streaming'. Appending to messages.content directly would rewrite the whole (growing) row on every
-- token: O(length) per token and O(length²) bytes written per reply.
CREATE TABLE message_chunks (
  message_n INTEGER NOT NULL REFERENCES messages (n) ON DELETE CASCADE,
  k INTEGER NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (message_n, k)
) STRICT, WITHOUT ROWID;

CREATE TABLE settings (
  key TEXT PRIMARY KEY,
  value_json TEXT NOT NULL CHECK (json_valid(value_json))
) STRICT, WITHOUT ROWID;

CREATE VIEW messages_searchable AS SELECT n, content FROM messages WHERE status <> 'streaming';
${FTS_INDEXES.messages_fts};
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages WHEN new.status <> 'streaming' BEGIN
  INSERT INTO messages_fts (rowid, content) VALUES (new.n, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages WHEN old.status <> 'streaming' BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.n, old.content);
END;
-- One trigger so the old entry is always removed before the new one is added (same rowid).
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content)
    SELECT 'delete', old.n, old.content WHERE old.status <> 'streaming';
  INSERT INTO messages_fts (rowid, content) SELECT new.n, new.content WHERE new.status <> 'streaming';
END;

${FTS_INDEXES.conversations_fts};
CREATE TRIGGER conversations_fts_insert AFTER INSERT ON conversations BEGIN
  INSERT INTO conversations_fts (rowid, title) VALUES (new.n, new.title);
END;
CREATE TRIGGER conversations_fts_delete AFTER DELETE ON conversations BEGIN
  INSERT INTO conversations_fts (conversations_fts, rowid, title) VALUES ('delete', old.n, old.title);
END;
CREATE TRIGGER conversations_fts_update AFTER UPDATE OF title ON conversations BEGIN
  INSERT INTO conversations_fts (conversations_fts, rowid, title) VALUES ('delete', old.n, old.title);
  INSERT INTO conversations_fts (rowid, title) VALUES (new.n, new.title);
END;
`

/**
 * v2: measured device profiles, one per (device set, model shape). A rowid table with a UNIQUE key rather
 * than WITHOUT ROWID: a profile is tens to hundreds of KB of JSON, and WITHOUT ROWID tables store large
 * rows poorly. Only JSON syntax is checked here; the profile's shape is checked on every read.
 */
const V2_SQL = `
CREATE TABLE device_profiles (
  n INTEGER PRIMARY KEY,
  device_key TEXT NOT NULL,
  shape_key TEXT NOT NULL,
  profile_json TEXT NOT NULL CHECK (json_valid(profile_json)),
  created_at INTEGER NOT NULL,
  UNIQUE (device_key, shape_key)
) STRICT;
`

/**
 * v3: one streaming path. Replies are saved while they stream by rewriting `messages.content` (throttled by
 * the chat service), so the v1 `message_chunks` table goes. A file from an older build may still hold chunk
 * rows of a reply that was cut off by a crash (the build folded them only when the reply left 'streaming');
 * they are appended to that message's content first, in order, so the recovered text is what the older
 * build showed. The update leaves the status alone: the next start's markInterrupted() stops the message.
 */
const V3_SQL = `
UPDATE messages AS m
  SET content = m.content || (SELECT group_concat(c.text, '' ORDER BY c.k) FROM message_chunks c WHERE c.message_n = m.n)
  WHERE EXISTS (SELECT 1 FROM message_chunks c WHERE c.message_n = m.n);
DROP TABLE message_chunks;
`

/**
 * v4: KV-cache snapshots as a trie of blocks (kv-blocks.ts). `parent` is the key of the block this one continues,
 * or the root key of a model fingerprint; no foreign key, because roots are not rows, and removing a block removes
 * its descendants explicitly (a recursive delete). The data lives in a table of its own: SQLite rewrites a whole
 * record on UPDATE, overflow pages and all, and marking a 5 MB block used must not rewrite 5 MB. Data, token ids and
 * checksum are checked on every read.
 */
const V4_SQL = `
CREATE TABLE kv_blocks (
  n INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  parent TEXT NOT NULL,
  start INTEGER NOT NULL CHECK (start >= 0),
  token_count INTEGER NOT NULL CHECK (token_count > 0),
  token_ids BLOB NOT NULL,
  checksum TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL
) STRICT;
CREATE INDEX kv_blocks_parent ON kv_blocks (parent, token_count);
CREATE INDEX kv_blocks_lru ON kv_blocks (last_used_at, n);
CREATE TABLE kv_block_data (
  block_n INTEGER PRIMARY KEY REFERENCES kv_blocks (n) ON DELETE CASCADE,
  data BLOB NOT NULL
) STRICT;
`

/**
 * v5: branches. A conversation started from a message of another keeps a link to it (`parent_id`, and the seq
 * of the message it was branched at), so the list can show it under its parent. ON DELETE SET NULL: purging the
 * parent leaves the branch as a conversation of its own — its messages are copies, not references.
 */
const V5_SQL = `
ALTER TABLE conversations ADD COLUMN parent_id TEXT REFERENCES conversations (id) ON DELETE SET NULL;
ALTER TABLE conversations ADD COLUMN branch_seq INTEGER CHECK (branch_seq IS NULL OR branch_seq >= 0);
CREATE INDEX conversations_parent ON conversations (parent_id) WHERE parent_id IS NOT NULL;
`

/**
 * v6: files summarized into conversations (issue #15): what the file was (name, type, size, sha256 of its bytes —
 * an unchanged file is found by it) and the text read from it, which follow-up questions are answered from. One
 * per conversation; it goes with its conversation (CASCADE). The text is stored rather than the file: it is what
 * the model read, and re-reading a PDF costs seconds. `text_sha256` lets a reader check the text is whole.
 */
const V6_SQL = `
CREATE TABLE documents (
  conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  bytes INTEGER NOT NULL CHECK (bytes >= 0),
  sha256 TEXT NOT NULL,
  text TEXT NOT NULL,
  text_sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX documents_sha256 ON documents (sha256);
`

/**
 * v7: other OpenAI-compatible servers used as backends (issue #16). A server's key is never stored in clear: with the
 * OS keychain (Electron's safeStorage) the row holds it sealed (`key_kind` 'sealed'); without one it lives in memory
 * until Tandem quits, and the row only says there was one ('session'), so the next run asks for it again.
 */
const V7_SQL = `
CREATE TABLE remote_servers (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  url TEXT NOT NULL,
  key_kind TEXT NOT NULL CHECK (key_kind IN ('none', 'sealed', 'session')),
  sealed_key BLOB,
  created_at INTEGER NOT NULL,
  CHECK ((key_kind = 'sealed') = (sealed_key IS NOT NULL))
) STRICT;
`

/** Every schema step, in order; versions are 1, 2, 3, ... with no gaps. */
export const MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: 'conversations, messages, settings, full-text search', sql: V1_SQL },
  { version: 2, name: 'device profiles', sql: V2_SQL },
  { version: 3, name: 'drop message_chunks (streaming rewrites messages.content)', sql: V3_SQL },
  { version: 4, name: 'KV-cache snapshot blocks', sql: V4_SQL },
  { version: 5, name: 'conversation branches', sql: V5_SQL },
  { version: 6, name: 'summarized documents', sql: V6_SQL },
  { version: 7, name: 'other servers', sql: V7_SQL }
])

/** The schema version this build writes; a file with a higher `user_version` is refused. */
export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version

/** Throws unless versions run 1, 2, 3, ... in order, so a mis-numbered append fails on first open, not silently. */
export function checkMigrations(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new Error(`migration ${JSON.stringify(m.name)} has version ${m.version}, expected ${i + 1} (versions must run 1, 2, 3, ...)`)
    }
  })
}
