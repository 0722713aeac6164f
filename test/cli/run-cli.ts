/** Runs `bin/tandem.mjs` in a child process with its own graph cache, collecting exit code and output. */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { expect } from 'vitest'
import { repoRoot } from '../helpers/paths'

const run = promisify(execFile)

/** What one CLI run printed and how it ended. */
export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the CLI with `args`; `cacheDir` becomes TANDEM_CACHE_DIR. Never rejects: a failure is its exit code. */
export async function runCli(args: readonly string[], cacheDir: string, timeoutMs: number): Promise<CliRun> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(repoRoot, 'bin', 'tandem.mjs'), ...args], {
      env: { ...process.env, TANDEM_CACHE_DIR: cacheDir },
      maxBuffer: 16 << 20,
      timeout: timeoutMs
    })
    return { code: 0, stdout, stderr }
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string }
    return { code: typeof err.code === 'number' ? err.code : -1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' }
  }
}

/** The one JSON object `--json` prints: stdout must be exactly one line, and it must match `shape`. */
export function onlyJsonLine(stdout: string, shape: Record<string, unknown>): unknown {
  const lines = stdout.trim().split('\n')
  expect(lines).toHaveLength(1)
  const v: unknown = JSON.parse(lines[0])
  expect(v).toMatchObject(shape)
  return v
}
