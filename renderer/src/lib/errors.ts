/**
 * @file Turns errors from the Api (which cross as `{ name, message }`) into what the UI shows: what happened,
 * and what to do next. Unknown errors still show their message, never a blank failure.
 */

/** Where the UI can send the user to fix a problem. */
export type ErrorAction = 'settings' | 'retry' | 'reload' | 'none'

/** An error ready for display. */
export interface UiError {
  /** short headline, e.g. "The model could not be loaded" */
  readonly title: string
  /** the message from the app */
  readonly detail: string
  /** what to do next, one sentence */
  readonly hint: string
  readonly action: ErrorAction
}

/** The name and message of anything thrown. */
export function errorParts(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message }
  if (typeof error === 'object' && error !== null) {
    const name = 'name' in error && typeof error.name === 'string' ? error.name : 'Error'
    const message = 'message' in error && typeof error.message === 'string' ? error.message : String(error)
    return { name, message }
  }
  return { name: 'Error', message: String(error) }
}

const matches = (text: string, ...words: string[]): boolean => words.some((w) => text.includes(w))

const NO_MODEL_HINT = 'Add a folder with GGUF, llama2.c or Hugging Face models in Settings → Models, then pick a model.'

/** What each error name the Api uses (main/services/errors.ts) means for the user. */
const BY_NAME: Readonly<Record<string, Omit<UiError, 'detail'>>> = {
  NoModelError: { title: 'No model available', hint: NO_MODEL_HINT, action: 'settings' },
  ModelError: {
    title: 'The model could not be loaded',
    hint: 'Pick another model in the header, or check in Settings → Models that the file is complete and supported.',
    action: 'settings'
  },
  ContextOverflowError: {
    title: 'Too long for this model',
    hint: 'Shorten the message or start a new chat; a model with a longer context can take more.',
    action: 'none'
  },
  // The app's validation messages already say what to fix.
  ValidationError: { title: 'That was not accepted', hint: '', action: 'none' },
  NotFoundError: {
    title: 'Not found',
    hint: 'It may have been deleted, perhaps in another window. Start a new chat or pick one from the list.',
    action: 'none'
  },
  BusyError: { title: 'Still answering', hint: 'Wait for the current reply, or press Esc to stop it.', action: 'none' },
  UnauthorizedError: {
    title: 'This page cannot reach Tandem',
    hint: 'Open the full address that `tandem serve` printed (it includes the access token).',
    action: 'none'
  },
  DamagedDataError: {
    title: 'Damaged data',
    hint: 'Part of the database file is damaged. Your other conversations are not affected; this one cannot be opened.',
    action: 'none'
  },
  DiskFullError: {
    title: 'The disk is full',
    hint: "Free some space on the disk that holds Tandem's data, then try again; what was written so far is kept.",
    action: 'none'
  },
  // A file to summarize that cannot be (empty, binary, encrypted, unsupported): the message names the file and why.
  DocumentError: { title: 'This file cannot be summarized', hint: '', action: 'none' },
  PayloadTooLargeError: {
    title: 'This file is too large',
    hint: 'Summarize a smaller file, or a part of this one saved as a file of its own.',
    action: 'none'
  },
  // A model download that failed: offline, the hub refused, no disk space, a wrong file; the message says what to do.
  DownloadError: { title: 'The download failed', hint: '', action: 'retry' },
  // Another server (Settings → Other servers) failed: unreachable, refused the key, stalled or dropped; the message says which.
  RemoteError: { title: 'The other server failed', hint: '', action: 'retry' },
  StoppedError: { title: 'Stopped', hint: '', action: 'none' },
  ShutdownError: { title: 'Tandem is closing', hint: 'Start Tandem again to continue.', action: 'reload' },
  InternalError: {
    title: 'Something went wrong inside Tandem',
    hint: 'Try again. If it keeps happening, restart Tandem.',
    action: 'retry'
  }
}

/** Detail and hint as one sentence-punctuated line, for inline messages. */
export function errorText(error: UiError): string {
  const detail = /[.!?…]$/.test(error.detail.trim()) ? error.detail.trim() : `${error.detail.trim()}.`
  return error.hint === '' ? detail : `${detail} ${error.hint}`
}

/** Classifies an error by its Api name, or for anything else (network failures) by its message. */
export function describeError(error: unknown): UiError {
  const { name, message } = errorParts(error)
  const detail = message === '' ? name : message
  const known = BY_NAME[name]
  if (known !== undefined) return { ...known, detail }
  const m = message.toLowerCase()
  if (name === 'TypeError' || matches(m, 'failed to fetch', 'network', 'econnrefused', 'connection')) {
    return {
      title: 'Lost the connection to Tandem',
      detail,
      hint: 'Check that Tandem (or `tandem serve`) is still running, then reload the page.',
      action: 'reload'
    }
  }
  return { title: 'Something went wrong', detail, hint: 'Try again. If it keeps happening, restart Tandem.', action: 'retry' }
}
