/** @file Errors the store raises; each names the file, table or row it is about so the UI can say what broke. */

/** The database file cannot be opened or upgraded (not SQLite, unreadable, a migration failed). */
export class StoreOpenError extends Error {
  override readonly name: string = 'StoreOpenError'
  constructor(
    readonly file: string,
    readonly detail: string,
    options?: { cause?: unknown }
  ) {
    super(`${file}: ${detail}`, options)
  }
}

/** The file was written by a newer Tandem (its schema version is above ours); it is left untouched. */
export class StoreSchemaTooNewError extends StoreOpenError {
  override readonly name = 'StoreSchemaTooNewError'
  constructor(
    file: string,
    readonly fileVersion: number,
    readonly appVersion: number
  ) {
    super(
      file,
      `database schema version ${fileVersion} is newer than this app supports (${appVersion}); ` +
        'update Tandem or choose another data folder (the file was not modified)'
    )
  }
}

/** A row read back from the database does not have the shape the schema promises (a corrupt or hand-edited file). */
export class StoreDataError extends Error {
  override readonly name = 'StoreDataError'
  constructor(
    readonly table: string,
    /** the row's id (or settings key), when known */
    readonly rowKey: string | undefined,
    readonly detail: string
  ) {
    super(`${table}${rowKey === undefined ? '' : ` row ${JSON.stringify(rowKey)}`}: ${detail}`)
  }
}

/** A write or lookup named a conversation or message that does not exist. */
export class StoreNotFoundError extends Error {
  override readonly name = 'StoreNotFoundError'
  constructor(
    readonly kind: 'conversation' | 'message' | 'document' | 'remote server',
    readonly id: string
  ) {
    super(`${kind} ${JSON.stringify(id)} not found`)
  }
}
