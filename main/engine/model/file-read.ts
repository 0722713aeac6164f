/**
 * @file The one way a model-related file is opened and read. A models folder is user content and may hold
 * anything under a file's name: a FIFO (a plain `open` for reading waits for a writer forever, on the
 * thread that called it), a link to /dev/zero (stat reports 0 bytes and a read never ends), a /proc file
 * (a regular file reporting 0 bytes that has content). So: open without blocking (O_NONBLOCK; it has no
 * effect on regular files), check what was opened with fstat on the descriptor (a check on the path could
 * be raced by a swap), refuse anything but a regular file, and cap the bytes actually read, never trusting
 * the size stat reported. Reads are synchronous: once a file is known regular and capped they are bounded,
 * and most callers are synchronous parsers.
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { constants as bufferConstants } from 'node:buffer'
import { ModelFormatError } from './errors'
import { errorCode } from '../../common/error-code'

/** Largest file read into memory (one ArrayBuffer, 4 GiB in Node 22): the upper bound for any cap. Model weights are never read whole (file-weights.ts). */
export const MAX_IN_MEMORY_BYTES = bufferConstants.MAX_LENGTH
/** Largest byte position in a model file: what a JS number counts exactly (files are never read whole, so size is no limit). */
export const MAX_FILE_OFFSET = Number.MAX_SAFE_INTEGER
/** Largest single read() asked of the OS, so a huge file is read in steps (Linux caps one read near 2 GiB). */
const READ_CHUNK_BYTES = 64 << 20
/** First buffer for a file whose reported size is 0 (a /proc file); grown by doubling up to the cap. */
const UNKNOWN_SIZE_START_BYTES = 64 << 10

/**
 * open() flags: read-only and non-blocking, so opening a FIFO returns at once (then refused by fstat).
 * O_NONBLOCK does not exist on Windows, where opening a named pipe does not wait for a writer.
 */
const OPEN_READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0)

/** A regular file opened for reading: its descriptor and what fstat said about it when opened. */
export interface OpenFile {
  readonly fd: number
  readonly sizeBytes: number
  readonly mtimeMs: number
}

/** What a non-regular file is, for messages ("a FIFO"). */
function kindOf(s: Stats): string {
  if (s.isFIFO()) return 'a FIFO'
  if (s.isCharacterDevice()) return 'a character device'
  if (s.isBlockDevice()) return 'a block device'
  if (s.isSocket()) return 'a socket'
  if (s.isDirectory()) return 'a folder'
  return 'not a file'
}

/** Throws ModelFormatError unless `s` (fstat of an open descriptor) is a regular file. */
function requireRegularFile(s: Stats, path: string, what: string): void {
  if (!s.isFile()) throw new ModelFormatError(path, `the ${what} is not a regular file (${kindOf(s)})`)
}

/** `n` bytes as "128 MiB" (whole MiB when it is a multiple, else bytes). */
export function formatLimit(n: number): string {
  return n >= 1 << 20 && n % (1 << 20) === 0 ? `${n / (1 << 20)} MiB` : `${n} bytes`
}

/** The ModelFormatError for a failed open (not found, permissions, too many links…). */
function openError(path: string, what: string, e: unknown): ModelFormatError {
  const code = errorCode(e)
  return new ModelFormatError(path, code === 'ENOENT' ? 'file not found' : `the ${what} could not be opened (${code ?? String(e)})`, undefined, { cause: e })
}

/** openRegularFile for async readers: a FileHandle (the caller closes it) and the fstat of what it opened. */
export async function openRegularFileHandle(path: string, what: string): Promise<{ readonly handle: FileHandle; readonly stats: Stats }> {
  let handle: FileHandle
  try {
    handle = await open(path, OPEN_READ_FLAGS)
  } catch (e) {
    throw openError(path, what, e)
  }
  try {
    const stats = await handle.stat()
    requireRegularFile(stats, path, what)
    return { handle, stats }
  } catch (e) {
    await handle.close()
    throw e
  }
}

/** Opens `path` without blocking and checks it is a regular file; the caller closes `fd`. `what` names it in errors ("tokenizer"). */
export function openRegularFile(path: string, what: string): OpenFile {
  let fd: number
  try {
    fd = openSync(path, OPEN_READ_FLAGS)
  } catch (e) {
    throw openError(path, what, e)
  }
  try {
    const s = fstatSync(fd)
    requireRegularFile(s, path, what)
    return { fd, sizeBytes: s.size, mtimeMs: s.mtimeMs }
  } catch (e) {
    closeSync(fd)
    throw e
  }
}

/**
 * Fills `bytes[from, to)` from file positions `[fileOffset + from, fileOffset + to)` in reads of at most
 * READ_CHUNK_BYTES; returns where it stopped (short at end of file).
 */
export function fillFromFile(fd: number, bytes: Uint8Array, from: number, to: number, fileOffset = 0): number {
  let at = from
  while (at < to) {
    const got = readSync(fd, bytes, at, Math.min(READ_CHUNK_BYTES, to - at), fileOffset + at)
    if (got === 0) break
    at += got
  }
  return at
}

/** Up to the first `n` bytes of an open file (fewer when it is shorter). */
export function readPrefix(file: OpenFile, n: number): Uint8Array {
  const bytes = new Uint8Array(n)
  return bytes.subarray(0, fillFromFile(file.fd, bytes, 0, n))
}

/**
 * The whole of a regular file, at most `maxBytes` (counted on what is read, so a file that reports a wrong
 * size or grows while read cannot pass the cap). The result starts at byteOffset 0 of its own buffer, so
 * 4-byte-aligned data can be viewed directly. `what` names the file in errors ("tokenizer").
 */
export function readFileCapped(path: string, maxBytes: number, what: string): Buffer {
  const file = openRegularFile(path, what)
  try {
    return readOpenFile(file, maxBytes, path, what)
  } finally {
    closeSync(file.fd)
  }
}

/** readFileCapped over a file already opened with openRegularFile (the caller closes it). */
export function readOpenFile(file: OpenFile, maxBytes: number, path: string, what: string): Buffer {
  const cap = Math.min(maxBytes, MAX_IN_MEMORY_BYTES)
  const tooLarge = (): never => {
    throw new ModelFormatError(path, `the ${what} is larger than ${formatLimit(cap)}`)
  }
  if (file.sizeBytes > cap) tooLarge()
  let bytes = new Uint8Array(file.sizeBytes > 0 ? file.sizeBytes : Math.min(cap, UNKNOWN_SIZE_START_BYTES))
  let done = fillFromFile(file.fd, bytes, 0, bytes.length)
  while (done === bytes.length) {
    // Full: the file may be longer than reported. One byte past the cap is enough to refuse it.
    if (done >= cap) {
      if (readSync(file.fd, new Uint8Array(1), 0, 1, done) > 0) tooLarge()
      break
    }
    const grown = new Uint8Array(Math.min(cap, Math.max(done * 2, UNKNOWN_SIZE_START_BYTES)))
    grown.set(bytes)
    bytes = grown
    done = fillFromFile(file.fd, bytes, done, bytes.length)
  }
  return Buffer.from(bytes.buffer, 0, done)
}

/** Like readFileCapped, as UTF-8 text (JSON, chat templates); invalid UTF-8 is refused, not replaced. */
export function readTextCapped(path: string, maxBytes: number, what: string): string {
  const bytes = readFileCapped(path, maxBytes, what)
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new ModelFormatError(path, `the ${what} is not valid UTF-8 text`)
  }
}
