/**
 * @file Playwright global setup: makes sure out/renderer is built from the current sources, then starts the
 * real app in browser mode (`tandem serve`) on a fresh temporary data folder (a real SQLite file) with the
 * shared test models, and hands its launch URL to the tests through TANDEM_E2E_URL. The teardown it returns
 * stops the server and deletes the folder.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { E2E_ENV, E2E_TOKEN_DELAY_MS } from './env'

const repoRoot = resolve(import.meta.dirname, '..', '..')

/** How long the server may take to print its URL (it may build the UI or warm up first). */
const SERVER_START_TIMEOUT_MS = 90_000

/** How long the server gets to shut down cleanly after SIGTERM before it is killed. */
const SERVER_STOP_TIMEOUT_MS = 10_000

/** Newest modification time (ms) of any file under `dir`. */
function newestMtimeMs(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestMtimeMs(path) : statSync(path).mtimeMs)
  }
  return newest
}

/** Rebuilds out/ with electron-vite when the renderer sources are newer than the built page. */
function ensureRendererBuilt(): void {
  const builtPage = join(repoRoot, 'out', 'renderer', 'index.html')
  const sourcesMs = Math.max(newestMtimeMs(join(repoRoot, 'renderer')), statSync(join(repoRoot, 'preload', 'api.ts')).mtimeMs)
  if (existsSync(builtPage) && statSync(builtPage).mtimeMs >= sourcesMs) return
  const result = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit']
  })
  if (result.status !== 0) throw new Error(`electron-vite build failed (exit ${String(result.status)})`)
}

/** Resolves with the launch URL the server prints on stdout. */
function waitForUrl(child: ChildProcess, logs: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    let stdout = ''
    const timer = setTimeout(() => reject(new Error(`tandem serve printed no URL within ${SERVER_START_TIMEOUT_MS} ms:\n${logs.join('')}`)), SERVER_START_TIMEOUT_MS)
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
      const m = /(http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+)/.exec(stdout)
      if (m?.[1] !== undefined) {
        clearTimeout(timer)
        resolvePromise(m[1])
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`tandem serve exited with ${String(code)} before printing its URL:\n${logs.join('')}`))
    })
  })
}

/** Waits for the child to exit, killing it if SIGTERM is not enough. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), SERVER_STOP_TIMEOUT_MS)
    child.once('exit', () => {
      clearTimeout(timer)
      resolvePromise()
    })
    child.kill('SIGTERM')
  })
}

/** Starts the server; returns the teardown. */
export default async function globalSetup(): Promise<() => Promise<void>> {
  ensureRendererBuilt()
  const scratch = mkdtempSync(join(tmpdir(), 'tandem-e2e-'))
  const dataDir = join(scratch, 'data')
  const cacheDir = join(scratch, 'cache')
  mkdirSync(cacheDir)
  const models = process.env.TANDEM_TEST_MODELS ?? resolve(repoRoot, '..', 'shared', 'models')
  // The user's own models folder points somewhere that does not exist: the UI must show it as missing.
  const missingModelsDir = join(scratch, 'no-such-models-folder')
  const logs: string[] = []
  const args = ['serve', '--port', '0', '--data-dir', dataDir, '--models', models, '--no-open', '--token-delay-ms', String(E2E_TOKEN_DELAY_MS)]
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'tandem.mjs'), ...args], {
    cwd: repoRoot,
    env: { ...process.env, TANDEM_CACHE_DIR: cacheDir, TANDEM_MODELS_DIR: missingModelsDir },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  child.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  child.stdout?.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  let url: string
  try {
    url = await waitForUrl(child, logs)
  } catch (err) {
    await stop(child)
    rmSync(scratch, { recursive: true, force: true })
    throw err
  }
  process.env[E2E_ENV.url] = url
  process.env[E2E_ENV.dataDir] = dataDir
  process.env[E2E_ENV.missingModelsDir] = missingModelsDir
  return async () => {
    await stop(child)
    if (process.env.TANDEM_E2E_KEEP !== '1') rmSync(scratch, { recursive: true, force: true })
  }
}
