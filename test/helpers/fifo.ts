/**
 * @file FIFOs for hostile-file tests, with a safety valve. A regression that opens a FIFO for reading blocks
 * the test's own thread, where no test timeout can fire; so a separate process opens each FIFO for writing
 * after a while and closes it, which ends such a read (empty) and lets the test fail on its assertions
 * instead of hanging the run. With correct code nobody reads, the writer's open waits, and dispose kills it.
 */
import { execFileSync, spawn } from 'node:child_process'

/** How long the valve waits: far beyond a prompt refusal, well inside Vitest's 120 s test timeout. */
const VALVE_AFTER_MS = 45_000

/** Creates FIFOs at `paths` (mkfifo) and starts their valve; call dispose when the test is done. */
export function makeFifos(paths: readonly string[]): { dispose(): void } {
  for (const p of paths) execFileSync('mkfifo', [p])
  const script = `setTimeout(() => { for (const p of JSON.parse(process.argv[1])) require('node:fs').closeSync(require('node:fs').openSync(p, 'w')) }, ${VALVE_AFTER_MS})`
  const valve = spawn(process.execPath, ['-e', script, JSON.stringify(paths)], { stdio: 'ignore' })
  valve.unref()
  return {
    dispose: () => {
      valve.kill('SIGKILL')
    }
  }
}
