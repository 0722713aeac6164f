/**
 * @file The errors services raise for callers, and the one conversion of any thrown value into the
 * `{ name, message }` shape that crosses IPC and HTTP. Names are a fixed set the UI can switch on.
 */
import { ContextOverflowError, InvalidLogitsError, ModelFormatError } from '../engine'
import { StoreDataError, StoreNotFoundError } from '../store'
import type { ApiErrorShape } from '../../preload/api'
import { failWith, type Fail } from '../common/reader'
import { errorCode } from '../common/error-code'
import { DocumentError } from './documents/errors'
import { DownloadError } from './downloads/errors'
import { RemoteError } from './remote/openai-remote'

/** Every error name that crosses the boundary. */
export type ApiErrorName =
  /** the request's arguments are malformed or out of range (nothing was changed) */
  | 'ValidationError'
  /** no such `service:method` */
  | 'UnknownMethodError'
  /** a conversation, message or model that does not exist (or was deleted) */
  | 'NotFoundError'
  /** no usable model: the user must add a models folder in Settings */
  | 'NoModelError'
  /** the model file could not be opened or run */
  | 'ModelError'
  /** the conversation does not fit in the model's context */
  | 'ContextOverflowError'
  /** the chosen placement cannot run this model on this machine's devices (change it in Settings → Devices) */
  | 'PlacementError'
  /** the conversation already has a reply being generated */
  | 'BusyError'
  /** the disk (or the database's size limit) is full: nothing more could be written */
  | 'DiskFullError'
  /** what was asked for is in a damaged part of the database file (the rest still reads) */
  | 'DamagedDataError'
  /** a file cannot be summarized: an unsupported type, empty, not text, encrypted or damaged (the message says which) */
  | 'DocumentError'
  /** a model download failed: offline, the hub refused, no disk space, a wrong file (the message says what to do) */
  | 'DownloadError'
  /** another server (Settings → Other servers) could not be used: unreachable, refused the key, stalled, dropped, erred */
  | 'RemoteError'
  /** too large to take (a request body, a file) */
  | 'PayloadTooLargeError'
  /** stopped by the user before anything was stored */
  | 'StoppedError'
  /** the app is shutting down */
  | 'ShutdownError'
  /** a bug: an exception nobody expected */
  | 'InternalError'

/** An error meant for the user, with a name from ApiErrorName. */
export class ApiError extends Error {
  constructor(
    override readonly name: ApiErrorName,
    message: string,
    options?: { cause?: unknown }
  ) {
    super(message, options)
  }

  /** The plain `{ name, message }` that crosses IPC and HTTP. */
  toShape(): ApiErrorShape {
    return { name: this.name, message: this.message }
  }
}

/** Shorthand for a ValidationError. */
export function invalid(message: string): ApiError {
  return new ApiError('ValidationError', message)
}

/** The shared reader's Fail for API arguments: a ValidationError naming the field. */
export const failInvalid: Fail = failWith(invalid)

/** Engine errors whose name is meaningful to the UI as is (they may come from a worker, so match by name). */
const PASSTHROUGH_NAMES: ReadonlySet<string> = new Set(['ContextOverflowError'])

/**
 * Any thrown value as an ApiError: ours pass through, known library errors get their API name, and anything
 * else becomes an InternalError (its message kept, since it is a local app and the message helps the user).
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof DocumentError) return new ApiError('DocumentError', err.message, { cause: err })
  if (err instanceof DownloadError) return new ApiError('DownloadError', err.message, { cause: err })
  if (err instanceof RemoteError) return new ApiError('RemoteError', err.message, { cause: err })
  if (err instanceof StoreNotFoundError) return new ApiError('NotFoundError', err.message, { cause: err })
  if (err instanceof ContextOverflowError) return new ApiError('ContextOverflowError', err.message, { cause: err })
  if (err instanceof ModelFormatError) return new ApiError('ModelError', err.message, { cause: err })
  if (err instanceof InvalidLogitsError) return new ApiError('ModelError', err.message, { cause: err })
  if (err instanceof StoreDataError || isCorrupt(err)) {
    return new ApiError('DamagedDataError', `This part of the database is damaged and could not be read (${errorMessage(err)}).`, { cause: err })
  }
  if (isDiskFull(err)) return new ApiError('DiskFullError', `The disk is full (${errorMessage(err)}): free some space and try again.`, { cause: err })
  if (err instanceof Error) {
    if (PASSTHROUGH_NAMES.has(err.name)) return new ApiError('ContextOverflowError', err.message, { cause: err })
    return new ApiError('InternalError', err.message || err.name, { cause: err })
  }
  return new ApiError('InternalError', String(err))
}

/**
 * SQLite's and the OS's "no space" codes. SQLITE_FULL is also what SQLite reports at its own size limit
 * (max_page_count); EDQUOT is a full disk quota. An error from a worker arrives as its message only, which
 * for Node's fs errors starts with the code.
 */
const DISK_FULL_CODES: ReadonlySet<string> = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT'])

/** Whether `err` says the disk is full. */
export function isDiskFull(err: unknown): boolean {
  if (!(err instanceof Error)) return false
  const code = errorCode(err)
  if (code !== undefined && DISK_FULL_CODES.has(code)) return true
  return /^(ENOSPC|EDQUOT):/.test(err.message)
}

/** The message of any thrown value (for logs and stored message errors). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** SQLite's codes for a database file whose pages or records do not read back (a damaged file). */
const CORRUPT_CODES: ReadonlySet<string> = new Set(['SQLITE_CORRUPT', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_VTAB'])

/** Whether `err` is SQLite reporting damage in the file. */
function isCorrupt(err: unknown): boolean {
  const code = errorCode(err)
  return code !== undefined && CORRUPT_CODES.has(code)
}
