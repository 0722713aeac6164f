/** @file Errors a loader raises for a file it cannot trust; the message always names the file. */

/** A model file (or folder) is truncated, corrupt, or uses something the engine does not support. */
export class ModelFormatError extends Error {
  override readonly name = 'ModelFormatError'
  constructor(
    readonly file: string,
    readonly detail: string,
    /** byte offset where the problem was found, when it is about a position in the file */
    readonly offset?: number,
    options?: ErrorOptions
  ) {
    super(`${file}: ${detail}${offset === undefined ? '' : ` (at byte ${offset})`}`, options)
  }
}
