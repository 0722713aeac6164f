/**
 * @file Downloading one model file (issue #16), as a desktop app must: the disk space checked first; the bytes
 * written to `<file>.part` beside the destination, so a half-downloaded file never has a model's name (the model
 * scan lists .gguf, .bin and complete Hugging Face folders only); pause = abort, resume = call again, continuing from
 * the part's length with an HTTP range request (a server that ignores the range starts it over); the length checked
 * against what the hub announced, before and while receiving (a server that sends more, or announces another
 * length, is refused); the digest of the whole file checked against the hub's (sha256 for LFS files, git's blob
 * sha1 for small ones) before the part is renamed into place, atomically, after an fsync. A checksum mismatch deletes
 * the part: those bytes are wrong, resuming them would keep them wrong.
 */
import { createHash, type Hash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { open, rename, rm, stat, statfs, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'
import { DownloadError } from './errors'

/** What the hub says a file is: where to get it, its size, and its digest. */
export interface RemoteFile {
  readonly url: string
  readonly bytes: number
  readonly digest: { readonly algorithm: 'sha256' | 'git-sha1'; readonly hex: string }
}

export interface DownloadProgress {
  /** bytes on disk so far (including what a previous attempt left) */
  readonly received: number
  readonly total: number
}

export interface DownloadOptions {
  readonly signal?: AbortSignal
  readonly onProgress?: (p: DownloadProgress) => void
  /** injectable for tests; default globalThis.fetch */
  readonly fetch?: typeof fetch
  /** free bytes on the destination's disk; default statfs */
  readonly freeBytes?: (dir: string) => Promise<number>
}

export interface DownloadResult {
  readonly path: string
  readonly bytes: number
  /** bytes a previous attempt had left that were kept */
  readonly resumedFrom: number
}

/** Space kept free beyond the file (a full disk breaks everything else, the database first). */
export const DISK_MARGIN_BYTES = 256 * 1024 * 1024

/** The `.part` file a download writes before it is complete. */
export function partPath(dest: string): string {
  return `${dest}.part`
}

async function sizeOf(path: string): Promise<number | null> {
  try {
    const s = await stat(path)
    return s.isFile() ? s.size : null
  } catch {
    return null
  }
}

/** A hash of `file`'s content as the hub computes it (git's blob header needs the whole size up front). */
function hashFor(digest: RemoteFile['digest'], totalBytes: number): Hash {
  return digest.algorithm === 'sha256' ? createHash('sha256') : createHash('sha1').update(`blob ${totalBytes}\0`)
}

async function hashExisting(path: string, hash: Hash, signal: AbortSignal | undefined): Promise<void> {
  for await (const chunk of createReadStream(path, { signal })) hash.update(chunk)
}

function formatGiB(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`
}

/** Content-Range's first byte and total ("bytes 100-999/1000"), or null. */
function contentRange(header: string | null): { start: number; total: number } | null {
  const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header ?? '')
  return m === null ? null : { start: Number(m[1]), total: Number(m[3]) }
}

/**
 * Downloads `remote` to `dest` (resuming a `.part` a previous attempt left); resolves once `dest` holds the checked
 * file. Rejects with a DownloadError saying what went wrong (the part is kept when resuming it can help), or with
 * the signal's reason when aborted (the part is kept: that is a pause).
 */
export async function downloadFile(remote: RemoteFile, dest: string, options: DownloadOptions = {}): Promise<DownloadResult> {
  const fetchFn = options.fetch ?? fetch
  const { signal } = options
  const part = partPath(dest)
  if (!Number.isSafeInteger(remote.bytes) || remote.bytes < 0) throw new DownloadError(`the hub gave no usable size for ${remote.url}`)
  let have = (await sizeOf(part)) ?? 0
  if (have > remote.bytes) {
    await rm(part, { force: true })
    have = 0
  }
  const freeBytes = options.freeBytes ?? (async (dir: string) => {
    const s = await statfs(dir)
    return s.bavail * s.bsize
  })
  const needed = remote.bytes - have + DISK_MARGIN_BYTES
  const free = await freeBytes(dirname(dest))
  if (free < needed) {
    throw new DownloadError(`Not enough disk space: the download needs ${formatGiB(remote.bytes - have)} more and ${formatGiB(DISK_MARGIN_BYTES)} to spare, and ${formatGiB(free)} is free.`)
  }

  const hash = hashFor(remote.digest, remote.bytes)
  let response: Response
  try {
    response = await fetchFn(remote.url, { signal, headers: have > 0 ? { Range: `bytes=${have}-` } : {} })
  } catch (err) {
    signal?.throwIfAborted()
    throw new DownloadError(`Could not reach ${new URL(remote.url).host}: ${err instanceof Error ? err.message : String(err)}. Check the connection and try again.`, { cause: err })
  }
  const resumedFrom = response.status === 206 ? have : 0
  if (response.status === 206) {
    const range = contentRange(response.headers.get('content-range'))
    if (range === null || range.start !== have || range.total !== remote.bytes) {
      await response.body?.cancel()
      throw new DownloadError(`The server answered the resume with another range (${response.headers.get('content-range') ?? 'none'}) than asked (bytes ${have}- of ${remote.bytes}).`)
    }
  } else if (response.status === 416 && have === remote.bytes) {
    // the part was already whole: only the check is left
    await response.body?.cancel()
  } else if (response.status !== 200) {
    await response.body?.cancel()
    throw new DownloadError(`The server answered HTTP ${response.status} for ${new URL(remote.url).pathname}.`)
  }
  const announced = response.headers.get('content-length')
  const expectedNow = response.status === 206 ? remote.bytes - have : response.status === 200 ? remote.bytes : 0
  if (response.status !== 416 && announced !== null && Number(announced) !== expectedNow) {
    await response.body?.cancel()
    throw new DownloadError(`The server announces ${announced} bytes where ${expectedNow} were expected: the file is not the one the hub lists.`)
  }

  let file: FileHandle | null = null
  let received = resumedFrom
  try {
    if (resumedFrom > 0 || response.status === 416) await hashExisting(part, hash, signal)
    if (response.status !== 416) {
      file = await open(part, resumedFrom > 0 ? 'a' : 'w')
      const body = response.body
      if (body === null) throw new DownloadError('The server sent no content.')
      for await (const chunk of body) {
        if (received + chunk.byteLength > remote.bytes) throw new DownloadError(`The server sent more than the ${remote.bytes} bytes it announced.`)
        await file.write(chunk)
        hash.update(chunk)
        received += chunk.byteLength
        options.onProgress?.({ received, total: remote.bytes })
      }
      await file.sync()
      await file.close()
      file = null
      if (received < remote.bytes) throw new DownloadError(`The connection ended after ${received} of ${remote.bytes} bytes; the download resumes from there.`)
    } else {
      received = have
    }
  } catch (err) {
    await file?.close()
    signal?.throwIfAborted()
    if (err instanceof DownloadError) throw err
    throw new DownloadError(`The download was interrupted after ${received} of ${remote.bytes} bytes (${err instanceof Error ? err.message : String(err)}); it resumes from there.`, { cause: err })
  }
  const hex = hash.digest('hex')
  if (hex !== remote.digest.hex) {
    await rm(part, { force: true })
    throw new DownloadError(`The downloaded file does not match the hub's checksum (${remote.digest.algorithm} ${hex.slice(0, 12)}… instead of ${remote.digest.hex.slice(0, 12)}…); it was deleted. Try again.`)
  }
  await rename(part, dest)
  await syncDir(dirname(dest))
  return { path: dest, bytes: received, resumedFrom }
}

/** Makes a rename durable (POSIX: fsync the directory; Windows refuses to open one and does not need it). */
async function syncDir(dir: string): Promise<void> {
  let handle: FileHandle | null = null
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch {
    // not supported here
  } finally {
    await handle?.close()
  }
}
