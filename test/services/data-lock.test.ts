/**
 * One process per data folder: a second app on a folder in use is refused with the holder's pid, a lock
 * left by a SIGKILLed process (or naming a reused pid) does not block the next start, and dispose releases it.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { acquireDataLock, createApp, DataFolderInUseError, LOCK_FILE_NAME, type App } from '../../main/services'
import { repoRoot, tempDir } from '../helpers/paths'

const scratch = tempDir('tandem-lock-')
afterAll(() => scratch.dispose())

let folders = 0
/** A fresh data folder (created, empty). */
function dataFolder(): string {
  const dir = join(scratch.dir, `data-${++folders}`)
  mkdirSync(dir, { recursive: true })
  return dir
}

const start = (dataDir: string): App => createApp({ dataDir, modelDirs: [], devRoot: null, env: {}, homeDir: join(scratch.dir, 'home'), appVersion: '9.9.9-test' })

/** The error createApp throws on this folder (fails the test if it starts). */
function refusal(dataDir: string): DataFolderInUseError {
  try {
    const app = start(dataDir)
    void app.dispose()
  } catch (err) {
    if (err instanceof DataFolderInUseError) return err
    throw err
  }
  throw new Error('the second app started on a folder in use')
}

/** A lock file as another process would have written it. */
function writeLock(dataDir: string, fields: Record<string, unknown>): void {
  const lock = { pid: 1, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z', command: 'test', processStart: null, nonce: 'x', ...fields }
  writeFileSync(join(dataDir, LOCK_FILE_NAME), JSON.stringify(lock))
}

describe('data folder lock', () => {
  it('refuses a second app on the same folder, naming the holder; dispose releases the lock', async () => {
    const dataDir = dataFolder()
    const first = start(dataDir)
    const lockFile = join(dataDir, LOCK_FILE_NAME)
    expect(JSON.parse(readFileSync(lockFile, 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() })
    const err = refusal(dataDir)
    expect(err.holder.pid).toBe(process.pid)
    expect(err.message).toContain(`pid ${process.pid}`)
    expect(err.message).toContain(dataDir)
    // the refused app left the holder's lock in place
    expect(existsSync(lockFile)).toBe(true)
    await first.dispose()
    expect(existsSync(lockFile)).toBe(false)
    const second = start(dataDir)
    await second.dispose()
    // nothing but the database files is left behind (no temporary lock files)
    expect(readdirSync(dataDir).filter((name) => name.startsWith(LOCK_FILE_NAME))).toEqual([])
  })

  it('starts after the holder was SIGKILLed, and refuses while it lived', async () => {
    const dataDir = dataFolder()
    const script = `import('./main/services/data-lock.ts').then((m) => { m.acquireDataLock(${JSON.stringify(dataDir)}, 'held by a child'); process.stdout.write('locked\\n'); setInterval(() => {}, 60000) })`
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)))
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => d.toString().includes('locked') && resolve())
        void exited.then(() => reject(new Error('the child exited before taking the lock')))
      })
      const err = refusal(dataDir)
      expect(err.holder.pid).toBe(child.pid)
      expect(err.message).toContain(`pid ${child.pid}`)
      expect(err.message).toContain('held by a child')
    } finally {
      child.kill('SIGKILL')
    }
    expect(await exited).toBe('SIGKILL')
    expect(existsSync(join(dataDir, LOCK_FILE_NAME))).toBe(true)
    const app = start(dataDir)
    expect(JSON.parse(readFileSync(join(dataDir, LOCK_FILE_NAME), 'utf8'))).toMatchObject({ pid: process.pid })
    await app.dispose()
  }, 60_000)

  it.runIf(process.platform === 'linux')('treats a live pid that started at another time as a reused pid (stale)', async () => {
    const dataDir = dataFolder()
    // process.ppid lives, but not since tick 1 after boot
    writeLock(dataDir, { pid: process.ppid, processStart: '1' })
    const app = start(dataDir)
    await app.dispose()
    // the same pid with its real start time is held
    const stat = readFileSync(`/proc/${process.ppid}/stat`, 'latin1')
    writeLock(dataDir, { pid: process.ppid, processStart: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] })
    expect(refusal(dataDir).holder.pid).toBe(process.ppid)
  })

  it('replaces a lock of a pid that does not run, and a damaged lock file', async () => {
    const dataDir = dataFolder()
    // a pid that just ended
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' })
    writeLock(dataDir, { pid: Number(gone.stdout) })
    await start(dataDir).dispose()
    writeFileSync(join(dataDir, LOCK_FILE_NAME), '{"pid": 12')
    await start(dataDir).dispose()
    writeFileSync(join(dataDir, LOCK_FILE_NAME), '')
    await start(dataDir).dispose()
  })

  it('counts a lock from another host as held (its process cannot be checked)', () => {
    const dataDir = dataFolder()
    writeLock(dataDir, { pid: 4242, host: 'elsewhere.example' })
    const err = refusal(dataDir)
    expect(err.message).toContain('pid 4242 on host elsewhere.example')
    expect(err.message).toContain(join(dataDir, LOCK_FILE_NAME))
  })

  it.runIf(process.platform !== 'win32')('refuses (without hanging) when the lock path is a FIFO', () => {
    const dataDir = dataFolder()
    expect(spawnSync('mkfifo', [join(dataDir, LOCK_FILE_NAME)]).status).toBe(0)
    expect(() => acquireDataLock(dataDir)).toThrow(/is not a Tandem lock file/)
  })

  it('a release only removes its own lock', () => {
    const dataDir = dataFolder()
    const lock = acquireDataLock(dataDir)
    expect(lock.held).toBe(true)
    // another process judged ours stale and took the folder
    writeLock(dataDir, { pid: 4242, host: 'elsewhere.example', nonce: 'theirs' })
    lock.release()
    expect(JSON.parse(readFileSync(lock.file, 'utf8'))).toMatchObject({ nonce: 'theirs' })
  })
})
