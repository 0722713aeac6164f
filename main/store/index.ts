/**
 * @file The store's public face: `openStore(file)` opens the database and builds the repositories on it.
 * Everything is synchronous (better-sqlite3); services call it between awaits, never across one.
 */
import { ConversationStore } from './conversations'
import { openDatabase, type Db } from './database'
import { DeviceProfileStore } from './device-profiles'
import { MessageStore } from './messages'
import { SettingsStore } from './settings'
import type { StoreOptions } from './types'

export { BUSY_TIMEOUT_MS, openDatabase, WAL_SIZE_LIMIT_BYTES, schemaVersion, type Db, type Stmt } from './database'
export { StoreDataError, StoreNotFoundError, StoreOpenError, StoreSchemaTooNewError } from './errors'
export { checkMigrations, LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration } from './migrations'
export { ConversationStore } from './conversations'
export { MessageStore } from './messages'
export { SettingsStore, type Validator } from './settings'
export { DeviceProfileStore, MAX_PROFILE_JSON_BYTES, MAX_PROFILE_KEY_LENGTH } from './device-profiles'
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
  /** Closes the connection (SQLite checkpoints the WAL into the main file); calling it again is a no-op. */
  close(): void
}

/** Opens (creating or upgrading) the database at `file`; see openDatabase for the errors it throws. */
export function openStore(file: string, options: StoreOptions = {}): Store {
  const db = openDatabase(file)
  try {
    return {
      db,
      conversations: new ConversationStore(db, options),
      messages: new MessageStore(db, options),
      settings: new SettingsStore(db),
      deviceProfiles: new DeviceProfileStore(db, options),
      close: () => db.close()
    }
  } catch (err) {
    db.close()
    throw err
  }
}
