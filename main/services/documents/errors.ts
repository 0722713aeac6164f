/** @file The error a document the summarizer cannot read raises, with a message for the user. */

/** Why a file cannot be summarized, in words for the user. */
export class DocumentError extends Error {
  override readonly name = 'DocumentError'
}
