/** @file The error of a download that did not complete, with a message for people (what happened, what to do). */
export class DownloadError extends Error {
  override readonly name = 'DownloadError'
}
