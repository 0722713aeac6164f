/**
 * @file The store's public face: `openStore(file)` opens the database and builds the repositories on it.
 * Everything is synchronous (better-sqlite3); services call it between awaits, never across one.
 */
import { ConversationImportStore } from './conversation-import'
import { ConversationStore } from './conversations'
import { openDatabase, type Db } from './database'
import { DeviceProfileStore } from './device-profiles'
import { DocumentStore } from './documents'
import { KvBlockStore } from './kv-blocks'
import { MessageStore } from './messages'
import { RemoteServerStore } from './remote-servers'
import { checkDatabase, type StoreNotice } from './repair'
import { SettingsStore } from './settings'
import type { StoreOptions } from './types'

export { BUSY_TIMEOUT_MS, openDatabase, WAL_SIZE_LIMIT_BYTES, schemaVersion, type Db, type Stmt } from './database'
export { StoreDataError, StoreNotFoundError, StoreOpenError, StoreSchemaTooNewError } from './errors'
export { checkMigrations, LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from './migrations'
export { ConversationStore } from './conversations'
export { DAMAGED_MESSAGE_ERROR, MessageStore } from './messages'
export { MAX_STATS_DEVICES } from './stats'
export { checkDatabase, MAX_CHECK_ERRORS, type CheckedDatabase, type StoreNotice } from './repair'
export { SettingsStore, type Validator } from './settings'
export { ConversationImportStore, type ImportedConversation, type ImportedDocument, type ImportedMessage, type ImportOutcome } from './conversation-import'
export { RemoteServerStore, type RemoteServerRecord, type StoredKey, type StoredKeyKind } from './remote-servers'
export { DocumentStore, type DocumentRecord, type NewDocument, type StoredSummary } from './documents'
export { DeviceProfileStore, MAX_PROFILE_JSON_BYTES, MAX_PROFILE_KEY_LENGTH } from './device-profiles'
export { kvBlockKey, KvBlockStore, kvRootKey, MAX_KV_BLOCK_BYTES, MAX_KV_BLOCK_TOKENS, type KvBlockRef, type KvMatch } from './kv-blocks'
export { MAX_QUERY_CHARS, MAX_QUERY_TERMS, MAX_SEARCH_LIMIT, SNIPPET_SCAN_CHARS, SNIPPET_WORDS } from './search-query'
export { SearchWorker, SearchWorkerError, type WorkerStarter } from './search-worker-client'
export type { JsonObject, JsonValue } from './rows'
export * from './types'

/** An open database with its repositories; close() when done (pairs with openStore). */
export interface Store {
  readonly db: Db
  readonly conversations: ConversationStore
  readonly messages: MessageStore
  readonly settings: SettingsStore
  /** cached device profiles (measured op-group times) per device set and model shape */
  readonly deviceProfiles: DeviceProfileStore
  /** KV-cache snapshots, as blocks keyed by the prefix they continue */
  readonly kvBlocks: KvBlockStore
  /** files summarized into conversations, with their text */
  readonly documents: DocumentStore
  /** whole conversations added from an export file */
  readonly imports: ConversationImportStore
  /** other OpenAI-compatible servers used as backends */
  readonly remoteServers: RemoteServerStore
  /** what the check at open found and repaired (see repair.ts); empty for a sound file */
  readonly notices: readonly StoreNotice[]
  /** Closes the connection (SQLite checkpoints the WAL into the main file); calling it again is a no-op. */
  close(): void
}

/**
 * Opens (creating or upgrading) the database at `file`, checks it and rebuilds a damaged search index; see
 * openDatabase for the errors it throws, and `notices` for what the check found.
 */
export function openStore(file: string, options: StoreOptions = {}): Store {
  const checked = file === ':memory:' ? { db: openDatabase(file), notices: [] } : checkDatabase(openDatabase(file), file, () => openDatabase(file))
  const { db, notices } = checked
  try {
    return {
      db,
      conversations: new ConversationStore(db, options),
      messages: new MessageStore(db, options),
      settings: new SettingsStore(db),
      deviceProfiles: new DeviceProfileStore(db, options),
      kvBlocks: new KvBlockStore(db, options),
      documents: new DocumentStore(db, options),
      imports: new ConversationImportStore(db),
      remoteServers: new RemoteServerStore(db, options),
      notices,
      close: () => db.close()
    }
  } catch (err) {
    db.close()
    throw err
  }
}
