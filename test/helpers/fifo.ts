/**
 * @file FIFOs for hostile-file tests, with a safety valve. A regression that opens a FIFO for reading blocks
 * the test's own thread, where no test timeout can fire; so a separate process opens each FIFO for writing
 * after a while and closes it, which ends such a read (empty) and lets the test fail on its assertions
 * instead of hanging the run. With correct code nobody reads, the writer's open waits, and dispose kills it.
 */
import { execFileSync, spawn } from 'node:child_process'

/** How long the valve waits: far beyond a prompt refusal, well inside Vitest's 120 s test timeout. */
const VALVE_AFTER_MS = 45_000
/** How often the valve then tries each FIFO. */
const VALVE_POLL_MS = 250

/** Creates FIFOs at `paths` (mkfifo) and starts their valve; call dispose when the test is done. */
export function makeFifos(paths: readonly string[]): { dispose(): void } {
  for (const p of paths) execFileSync('mkfifo', [p])
  const script = [
    "const fs = require('node:fs')",
    'const paths = JSON.parse(process.argv[1])',
    'const flags = fs.constants.O_WRONLY | fs.constants.O_NONBLOCK',
    // ENXIO while no reader has it open: try again on the next round
    'const unblock = () => { for (const p of paths) { try { fs.closeSync(fs.openSync(p, flags)) } catch {} } }',
    `setTimeout(() => setInterval(unblock, ${VALVE_POLL_MS}), ${VALVE_AFTER_MS})`
  ].join('\n')
  const valve = spawn(process.execPath, ['-e', script, JSON.stringify(paths)], { stdio: 'ignore' })
  valve.unref()
  return {
    dispose: () => {
      valve.kill('SIGKILL')
    }
  }
}
