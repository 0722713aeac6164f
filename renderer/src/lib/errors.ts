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

/** Classifies an error by its name (preferred) or message into a headline and next step. */
export function describeError(error: unknown): UiError {
  const { name, message } = errorParts(error)
  const n = name.toLowerCase()
  const m = message.toLowerCase()
  const detail = message === '' ? name : message

  if (matches(n, 'nomodel') || (matches(m, 'no model') && !matches(m, 'load'))) {
    return {
      title: 'No model selected',
      detail,
      hint: 'Add a folder with GGUF, llama2.c or Hugging Face models in Settings, then pick a model.',
      action: 'settings'
    }
  }
  if (matches(n, 'modelnotfound', 'modelmissing') || (matches(m, 'model') && matches(m, 'not found', 'no such', 'missing', 'enoent'))) {
    return {
      title: 'The model is no longer there',
      detail,
      hint: 'The file or folder may have moved. Pick another model, or check the model folders in Settings.',
      action: 'settings'
    }
  }
  if (matches(n, 'modelformat', 'modelload', 'unsupported') || matches(m, 'failed to load', 'could not load', 'cannot load', 'unsupported')) {
    return {
      title: 'The model could not be loaded',
      detail,
      hint: 'Pick another model in the header. If this model should work, check the file is complete.',
      action: 'settings'
    }
  }
  if (matches(n, 'context', 'toolong') || matches(m, 'context', 'too long', 'too many tokens')) {
    return {
      title: 'The message is too long for this model',
      detail,
      hint: 'Shorten the message, start a new chat, or pick a model with a longer context.',
      action: 'none'
    }
  }
  if (matches(n, 'validation', 'invalid', 'input', 'usage', 'toolarge') || matches(m, 'must be', 'too large', 'exceeds')) {
    return { title: 'That request was not accepted', detail, hint: 'Check the input and try again.', action: 'none' }
  }
  if (matches(n, 'notfound') || matches(m, 'not found')) {
    return {
      title: 'Not found',
      detail,
      hint: 'It may have been deleted in another window. Reload to see the current list.',
      action: 'reload'
    }
  }
  if (matches(n, 'network', 'connection', 'typeerror') || matches(m, 'failed to fetch', 'network', 'econnrefused')) {
    return {
      title: 'Lost the connection to Tandem',
      detail,
      hint: 'Check that Tandem (or `tandem serve`) is still running, then reload the page.',
      action: 'reload'
    }
  }
  if (matches(n, 'generation', 'engine', 'worker') || matches(m, 'generation', 'inference')) {
    return {
      title: 'Generation failed',
      detail,
      hint: 'Try Regenerate. If it keeps failing, pick another model or restart Tandem.',
      action: 'retry'
    }
  }
  return { title: 'Something went wrong', detail, hint: 'Try again. If it keeps happening, restart Tandem.', action: 'retry' }
}
