/**
 * `tandem serve` and `npm start`'s fallback as users run them: child processes, the URL line on stdout,
 * the token required, and a clean shutdown on SIGTERM / SIGINT.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MAX_TOKEN_DELAY_MS, parseCli, UsageError } from '../../main/cli/args'
import { repoRoot, sharedModels, tempDir } from '../helpers/paths'

const scratch = tempDir('tandem-serve-')
afterAll(() => scratch.dispose())

interface Running {
  readonly child: ChildProcess
  readonly url: URL
  stderr(): string
  exited: Promise<number | null>
}

/** Starts a script with args and waits for the "running at" line on stdout. */
function start(script: string, args: string[]): Promise<Running> {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', script), ...args], {
    cwd: repoRoot,
    env: { ...process.env, TANDEM_MODELS_DIR: join(scratch.dir, 'no-models') },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within 60 s; stderr: ${stderr}`)), 60_000)
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString()
      const m = /^Tandem is running at (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64})$/m.exec(stdout)
      if (m !== null) {
        clearTimeout(timer)
        resolve({ child, url: new URL(m[1]), stderr: () => stderr, exited })
      }
    })
    void exited.then((code) => reject(new Error(`exited with ${code} before printing the URL; stderr: ${stderr}`)))
  })
}

async function version(url: URL, token: string): Promise<Response> {
  return fetch(`${url.origin}/api/app/version`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: '{"args":[]}'
  })
}

describe('tandem serve', () => {
  it('prints the URL with the token, serves page and API, and shuts down cleanly on SIGTERM', async () => {
    const dataDir = join(scratch.dir, 'data')
    const s = await start('tandem.mjs', ['serve', '--port', '0', '--data-dir', dataDir, '--models', sharedModels, '--no-open'])
    try {
      const token = s.url.searchParams.get('token') ?? ''
      expect((await version(s.url, token)).status).toBe(200)
      expect((await version(s.url, 'x')).status).toBe(401)
      const page = await fetch(s.url)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain('<div id="root">')
      const models = await fetch(`${s.url.origin}/api/models/list`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: '{"args":[]}'
      })
      expect(JSON.stringify(await models.json())).toContain('stories260K.bin')
    } finally {
      s.child.kill('SIGTERM')
    }
    expect(await s.exited).toBe(0)
    expect(s.stderr()).toContain('stopped')
    expect(existsSync(join(dataDir, 'tandem.db'))).toBe(true)
    // the WAL was checkpointed into the database when it closed
    expect(existsSync(join(dataDir, 'tandem.db-wal'))).toBe(false)
  })

  it('a second server on the same data folder exits at once, naming the first one', async () => {
    const dataDir = join(scratch.dir, 'shared-data')
    const args = ['serve', '--port', '0', '--data-dir', dataDir, '--no-open']
    const first = await start('tandem.mjs', args)
    let second: ChildProcess | null = null
    try {
      second = spawn(process.execPath, [join(repoRoot, 'bin', 'tandem.mjs'), ...args], {
        cwd: repoRoot,
        env: { ...process.env, TANDEM_MODELS_DIR: join(scratch.dir, 'no-models') },
        stdio: ['ignore', 'pipe', 'pipe']
      })
      let stdout = ''
      let stderr = ''
      const running = second
      // either it exits, or it prints its URL: it started on a folder in use (the failure this test is for)
      const outcome = await new Promise<number | null | 'started'>((resolve) => {
        running.stdout?.on('data', (d: Buffer) => {
          stdout += d.toString()
          if (stdout.includes('Tandem is running at')) resolve('started')
        })
        running.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
        running.on('exit', resolve)
      })
      expect(outcome).toBe(1)
      expect(stdout).toBe('')
      expect(stderr).toMatch(new RegExp(`^tandem: The data folder .* is in use by another Tandem process \\(pid ${first.child.pid}, started .* as ".*serve.*"\\)\\..*\n$`))
      // the first one goes on
      expect((await version(first.url, first.url.searchParams.get('token') ?? '')).status).toBe(200)
    } finally {
      // (a second server that started after all must not outlive the test)
      if (second?.exitCode === null) second.kill('SIGKILL')
      first.child.kill('SIGTERM')
    }
    expect(await first.exited).toBe(0)
    expect(existsSync(join(dataDir, 'tandem.lock'))).toBe(false)
  }, 120_000)

  it('refuses bad flags with a usage error', async () => {
    const child = spawn(process.execPath, [join(repoRoot, 'bin', 'tandem.mjs'), 'serve', '--port', 'abc'], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    expect(code).toBe(2)
    expect(stderr).toMatch(/--port must be an integer from 0 to 65535/)
  })
})

describe('tandem serve flags', () => {
  it('--token-delay-ms paces replies (default 0, none) and refuses values out of range', () => {
    expect(parseCli(['serve'])).toMatchObject({ command: 'serve', tokenDelayMs: 0 })
    expect(parseCli(['serve', '--token-delay-ms', '20'])).toMatchObject({ command: 'serve', tokenDelayMs: 20 })
    expect(() => parseCli(['serve', '--token-delay-ms=-1'])).toThrow(new RegExp(`--token-delay-ms must be an integer from 0 to ${MAX_TOKEN_DELAY_MS}`))
    expect(() => parseCli(['serve', '--token-delay-ms', '2.5'])).toThrow(UsageError)
    expect(() => parseCli(['serve', '--token-delay-ms', String(MAX_TOKEN_DELAY_MS + 1)])).toThrow(UsageError)
  })
})

describe('npm start', () => {
  const electronInstalled = existsSync(join(repoRoot, 'node_modules', 'electron', 'path.txt'))
  it.skipIf(electronInstalled)('falls back to browser mode when the Electron binary is missing, saying so', async () => {
    const s = await start('start.mjs', ['--no-open', '--data-dir', join(scratch.dir, 'start-data')])
    try {
      expect(s.stderr()).toMatch(/Electron's binary is not installed \(.*\); starting browser mode instead/)
      expect((await version(s.url, s.url.searchParams.get('token') ?? '')).status).toBe(200)
    } finally {
      s.child.kill('SIGINT')
    }
    expect(await s.exited).toBe(0)
  })
})
