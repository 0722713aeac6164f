/**
 * @file A real `tandem serve` child process for tests that need the whole app behind its HTTP host: the
 * Playwright global setup and the soak. Starts it, waits for the launch URL it prints, and stops it
 * (SIGTERM, then SIGKILL if it does not exit in time).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot } from './paths'

/** How long the server may take to print its URL (it may build the UI or warm up first). */
export const SERVER_START_TIMEOUT_MS = 90_000

/** How long the server gets to shut down cleanly after SIGTERM before it is killed. */
export const SERVER_STOP_TIMEOUT_MS = 10_000

/** A started server: its process, launch URL (with token) and everything it printed so far. */
export interface ServeProcess {
  readonly child: ChildProcess
  readonly url: string
  /** origin without the path, e.g. http://127.0.0.1:PORT */
  readonly origin: string
  readonly token: string
  readonly logs: string[]
  /** the match of `pattern` in what it printed, once it printed it (rejects after SERVER_START_TIMEOUT_MS) */
  line(pattern: RegExp): Promise<RegExpExecArray>
}

/** Spawns `tandem serve ARGS` with `env` added to ours and resolves once it printed its URL. */
export async function startServe(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<ServeProcess> {
  const child = spawn(process.execPath, [join(repoRoot, 'bin', 'tandem.mjs'), 'serve', ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const logs: string[] = []
  child.stderr?.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  child.stdout?.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  try {
    const url = await waitForUrl(child, logs)
    const parsed = new URL(url)
    const line = async (pattern: RegExp): Promise<RegExpExecArray> => {
      const deadline = Date.now() + SERVER_START_TIMEOUT_MS
      for (;;) {
        const m = pattern.exec(logs.join(''))
        if (m !== null) return m
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`tandem serve never printed ${String(pattern)}:\n${logs.join('')}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    return { child, url, origin: parsed.origin, token: parsed.searchParams.get('token') ?? '', logs, line }
  } catch (err) {
    await stopServe(child)
    throw err
  }
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
export function stopServe(child: ChildProcess): Promise<void> {
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
