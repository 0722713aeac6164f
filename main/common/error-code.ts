/** @file The code a Node system error or a SQLite error carries ('ENOENT', 'SQLITE_FULL', …): one reading for every layer. */

/** `err.code` when `err` is an Error with a string code, else undefined. */
export function errorCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined
}
