/**
 * @file One process per data folder: `<dataDir>/tandem.lock` names the process that uses the folder. Two
 * processes on one database would each think the other's live reply was cut off by a crash (and mark it
 * stopped) and both write the same conversations, so the second one refuses to start and says who holds it.
 *
 * Why a file and not SQLite's `locking_mode = EXCLUSIVE`: that also shuts out our own second connections
 * (a read connection for search in a worker), and the error it gives names no process.
 *
 * How: the lock's JSON is written to a temporary file and hard-linked to `tandem.lock` (link fails with
 * EEXIST, so taking it is atomic and the file is never seen half-written; where the file system has no hard
 * links, an exclusive 'wx' create is the fallback). A lock is stale when its process is gone: `kill(pid, 0)`
 * says ESRCH, or, on Linux, the process under that pid started at another time than the one recorded (the pid
 * was reused). A stale lock is first renamed to a unique name, which only one starter can do, and removed only
 * if it still holds the bytes judged stale; so two processes starting over one stale lock cannot both win.
 *
 * Limits: liveness is only checked on the same host (a lock from another host — a shared or synced folder —
 * counts as held, and the message names the file to delete); elsewhere than Linux a reused pid makes a stale
 * lock look held until that process ends (the message names the pid and the file); in separate pid
 * namespaces (containers sharing a folder) pids mean nothing, so do not share a data folder between them.
 * A folder that takes no new files (disk full, read-only) gets no lock: nothing can write there anyway, and
 * refusing to start would also hide the user's conversations.
 */
import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, realpathSync, renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { failWith, FieldReader } from '../common/reader'
import { errorCode } from '../common/error-code'
import { readFileCapped } from '../engine'

/** The lock's file name inside the data folder. */
export const LOCK_FILE_NAME = 'tandem.lock'

/** Bytes of a lock file read at most; ours are ~300, so anything bigger is not a lock we wrote. */
const MAX_LOCK_FILE_BYTES = 4096

/** Characters of the holder's command line kept in the lock (enough to tell `tandem serve` from the app). */
const MAX_COMMAND_CHARS = 300

/** Attempts to take the lock; each failed one found a stale lock and cleared it, so a few suffice. */
const MAX_ACQUIRE_ATTEMPTS = 5

/** Who holds a data folder, as the lock file says. */
export interface LockHolder {
  readonly pid: number
  readonly host: string
  /** ISO time the holder took the lock */
  readonly startedAt: string
  /** the holder's command line (shortened) */
  readonly command: string
  /** Linux: the holder's start time in clock ticks since boot (/proc/PID/stat field 22); null elsewhere */
  readonly processStart: string | null
  /** random per lock, so two apps in one process (tests) tell their locks apart */
  readonly nonce: string
}

/** The data folder is used by another live process (or by another app in this one). */
export class DataFolderInUseError extends Error {
  override readonly name = 'DataFolderInUseError'

  constructor(
    readonly dataDir: string,
    readonly lockFile: string,
    readonly holder: LockHolder
  ) {
    const where = holder.host === hostname() ? '' : ` on host ${holder.host}`
    const self = holder.pid === process.pid && holder.host === hostname() ? ', this same process' : ''
    super(
      `The data folder ${dataDir} is in use by another Tandem process (pid ${holder.pid}${where}${self}, started ${holder.startedAt} ` +
        `as "${holder.command}"). Close it first or use another data folder; if that process is not running, delete ${lockFile}.`
    )
  }
}

/** A taken lock; release() when the folder is no longer used (idempotent). */
export interface DataLock {
  readonly file: string
  /** false when the folder could not be written (disk full, read-only): the app runs without a lock */
  readonly held: boolean
  release(): void
}

/**
 * Write errors that mean the folder takes no new files (full, read-only, not ours): not a lock conflict. The
 * store then opens or refuses the database as it did before the lock existed.
 */
const UNWRITABLE_CODES: ReadonlySet<unknown> = new Set(['ENOSPC', 'EDQUOT', 'EROFS', 'EACCES', 'EPERM'])

/** Lock files this process holds, by path: a second app in the same process must see them as held. */
const heldHere = new Map<string, string>()

/** Linux: a process's start time (field 22 of /proc/PID/stat, after the parenthesised name); else null. */
function processStartOf(pid: number): string | null {
  if (process.platform !== 'linux') return null
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
    // the name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[19] ?? null
  } catch {
    return null
  }
}

/** Whether a process with this pid runs now (EPERM: it runs, as another user). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return errorCode(err) === 'EPERM'
  }
}

/** What is at the lock's path: its bytes, nothing, or something that is not a lock file. */
type LockFileState = Buffer | 'missing' | 'not-a-lock'

/** Reads the lock file with the one bounded reader (non-blocking open, regular files only), so a FIFO cannot hang us. */
function readLockFile(file: string): LockFileState {
  try {
    return readFileCapped(file, MAX_LOCK_FILE_BYTES, 'lock file')
  } catch (err) {
    return err instanceof Error && errorCode(err.cause) === 'ENOENT' ? 'missing' : 'not-a-lock'
  }
}

/** A lock file's content that is not a lock we wrote. */
class NotALockError extends Error {}

const notALock = failWith((message) => new NotALockError(message))

/** The holder a lock file names, or null when its content is not a lock we wrote. */
function parseHolder(bytes: Buffer): LockHolder | null {
  try {
    const r = new FieldReader(notALock, 'lock', JSON.parse(bytes.toString('utf8')))
    return {
      pid: r.int('pid', 1, Number.MAX_SAFE_INTEGER),
      host: r.text('host', MAX_LOCK_FILE_BYTES),
      startedAt: r.text('startedAt', MAX_LOCK_FILE_BYTES),
      command: r.text('command', MAX_LOCK_FILE_BYTES),
      processStart: r.textOrNull('processStart', MAX_LOCK_FILE_BYTES),
      nonce: r.text('nonce', MAX_LOCK_FILE_BYTES)
    }
  } catch (err) {
    if (err instanceof SyntaxError || err instanceof NotALockError) return null
    throw err
  }
}

/** Whether the holder still uses the folder; what cannot be checked (another host) counts as held. */
function holderLive(file: string, holder: LockHolder): boolean {
  if (holder.host !== hostname()) return true
  if (holder.pid === process.pid) return heldHere.get(file) === holder.nonce
  if (!pidAlive(holder.pid)) return false
  const start = processStartOf(holder.pid)
  return holder.processStart === null || start === null || start === holder.processStart
}

/** Creates `file` with `content` only if it does not exist; false when it does. */
function createExclusive(file: string, content: string): boolean {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(temp, content, { flag: 'wx' })
  try {
    linkSync(temp, file)
    return true
  } catch (err) {
    if (errorCode(err) === 'EEXIST') return false
    // no hard links here (FAT, some network shares): an exclusive create, written right after
    try {
      writeFileSync(file, content, { flag: 'wx' })
      return true
    } catch (inner) {
      if (errorCode(inner) === 'EEXIST') return false
      throw inner
    }
  } finally {
    unlinkSync(temp)
  }
}

/** Removes the lock at `file` only if it still has exactly the `stale` bytes (see the file header). */
function removeIfUnchanged(file: string, stale: Buffer): void {
  const claimed = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.stale`
  try {
    renameSync(file, claimed)
  } catch {
    return // someone else cleared it first
  }
  const now = readLockFile(claimed)
  if (!(now instanceof Buffer) || !now.equals(stale)) {
    // another starter took a fresh lock between our read and the rename: put it back (this fails only if a
    // third starter took the empty slot meanwhile, and then that one holds the folder)
    try {
      linkSync(claimed, file)
    } catch {
      // leave the third starter's lock
    }
  }
  unlinkSync(claimed)
}

/**
 * Takes the lock of an existing data folder, replacing a stale one; throws DataFolderInUseError naming the
 * live holder.
 * `command` is recorded for the message a second process shows (default: this process's command line).
 */
export function acquireDataLock(dataDir: string, command: string = process.argv.join(' ')): DataLock {
  // the real path, so one folder reached through a link is one lock for heldHere too
  const file = join(realpathSync(dataDir), LOCK_FILE_NAME)
  const holder: LockHolder = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    command: command.length > MAX_COMMAND_CHARS ? `${command.slice(0, MAX_COMMAND_CHARS)}…` : command,
    processStart: processStartOf(process.pid),
    nonce: randomBytes(8).toString('hex')
  }
  const content = `${JSON.stringify(holder)}\n`
  for (let attempt = 0; attempt < MAX_ACQUIRE_ATTEMPTS; attempt++) {
    try {
      if (createExclusive(file, content)) {
        heldHere.set(file, holder.nonce)
        return { file, held: true, release: () => release(file, holder.nonce) }
      }
    } catch (err) {
      if (!UNWRITABLE_CODES.has(errorCode(err))) throw err
      // see UNWRITABLE_CODES and the file header
      return { file, held: false, release: () => undefined }
    }
    const state = readLockFile(file)
    if (state === 'missing') continue
    if (state === 'not-a-lock') throw new Error(`${file} is not a Tandem lock file (not a small regular file); remove it to start`)
    // content that is not a lock we wrote names no process, so none holds it (a crash between the
    // fallback's create and its write, or a damaged file)
    const existing = parseHolder(state)
    if (existing !== null && holderLive(file, existing)) throw new DataFolderInUseError(dataDir, file, existing)
    removeIfUnchanged(file, state)
  }
  throw new Error(`could not take the lock ${file}: it kept changing (other processes starting at the same time?)`)
}

/** Removes the lock if it is still ours (never another process's, if ours was wrongly judged stale). */
function release(file: string, nonce: string): void {
  if (heldHere.get(file) !== nonce) return
  heldHere.delete(file)
  const state = readLockFile(file)
  if (state instanceof Buffer && parseHolder(state)?.nonce === nonce) {
    try {
      unlinkSync(file)
    } catch {
      // already gone
    }
  }
}
