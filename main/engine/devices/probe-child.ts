/**
 * @file Entry of a probe child process (started by probe.ts with the EP name as its only argument): probes
 * that EP in this process and sends one ProbeMessage back over the IPC channel. Running here, a driver that
 * segfaults or aborts (as two concurrent WebGPU sessions do) ends this child, never the app.
 */
import type { ProbeMessage } from './probe-protocol'
import { probeEpInProcess, shortMessage } from './probe-run'

/** Sends `message` to the parent, then exits (ORT's native threads would otherwise keep the child alive). */
function reply(message: ProbeMessage, code: number): void {
  if (process.send === undefined) {
    process.stderr.write('probe-child: no IPC channel (start it through probe.ts)\n')
    process.exit(2)
  }
  process.send(message, () => process.exit(code))
}

const ep = process.argv[2]
if (ep === undefined || ep === '') {
  reply({ type: 'error', message: 'probe child started without an EP name' }, 2)
} else {
  probeEpInProcess(ep).then(
    (result) => reply({ type: 'result', result }, 0),
    (e: unknown) => reply({ type: 'error', message: shortMessage(e) }, 1)
  )
}
