/**
 * @file Reading a document from disk for a summary: its type and size are checked from the name and a stat before
 * anything is read, the read is bounded (a file that grows past the limit while being read is refused, not read
 * whole), and a file that disappears or cannot be read gives a message, not a stack trace.
 */
import { open, stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { errorCode } from '../../common/error-code'
import { checkDocumentSize, documentTypeOf, MAX_DOCUMENT_BYTES } from './extract'
import { DocumentError } from './errors'

/** A document file's name and bytes. */
export interface DocumentFile {
  readonly name: string
  readonly bytes: Uint8Array
}

function unreadable(path: string, err: unknown): DocumentError {
  const code = errorCode(err)
  if (code === 'ENOENT') return new DocumentError(`${path} was not found (it may have been moved or deleted).`)
  if (code === 'EACCES' || code === 'EPERM') return new DocumentError(`${path} cannot be read: permission denied.`)
  if (code === 'EISDIR') return new DocumentError(`${path} is a folder, not a file.`)
  return new DocumentError(`${path} could not be read (${code ?? (err instanceof Error ? err.message : String(err))}).`)
}

/** The bytes of the document at `path`; DocumentError for a type, size or read that does not work out. */
export async function readDocumentFile(path: string): Promise<DocumentFile> {
  const name = basename(path)
  documentTypeOf(name)
  let size: number
  try {
    const s = await stat(path)
    if (!s.isFile()) throw new DocumentError(`${path} is not a regular file.`)
    size = s.size
  } catch (err) {
    throw err instanceof DocumentError ? err : unreadable(path, err)
  }
  checkDocumentSize(name, size)
  try {
    const handle = await open(path, 'r')
    try {
      // one byte more than the limit: a file that grew past it is seen to have done so
      const buffer = new Uint8Array(Math.min(size, MAX_DOCUMENT_BYTES) + 1)
      let filled = 0
      for (;;) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled)
        if (bytesRead === 0) break
        filled += bytesRead
        if (filled === buffer.length) break
      }
      if (filled > MAX_DOCUMENT_BYTES) checkDocumentSize(name, filled)
      if (filled !== size) throw new DocumentError(`${path} changed while it was being read (${size} bytes, then ${filled}); try again once it is saved.`)
      return { name, bytes: buffer.subarray(0, filled) }
    } finally {
      await handle.close()
    }
  } catch (err) {
    throw err instanceof DocumentError ? err : unreadable(path, err)
  }
}
