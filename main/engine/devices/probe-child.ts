/**
 * @file Entry of a probe child process (started by probe.ts with one argument: the EP name, or an EP-device
 * target as JSON): probes it in this process and sends one ProbeMessage back over the IPC channel. Running
 * here, a driver or provider library that segfaults or aborts (as two concurrent WebGPU sessions do) ends this
 * child, never the app.
 */
import { FieldReader, failWith } from '../../common/reader'
import type { ProbeMessage } from './probe-protocol'
import { probeEpInProcess, shortMessage, type ProbeTarget } from './probe-run'

/** Most provider libraries one probe registers. */
const MAX_PROBE_LIBRARIES = 16
/** Longest name or path accepted in a target. */
const MAX_TARGET_STRING = 4096

/** The child's argument: a plain EP name, or a JSON EP-device target (validated: it crossed a process boundary). */
function parseTarget(arg: string): ProbeTarget {
  if (!arg.startsWith('{')) return arg
  const fail = failWith((message) => new Error(`probe target: ${message}`))
  const parsed: unknown = JSON.parse(arg)
  const o = new FieldReader(fail, 'target', parsed)
  return {
    epName: o.text('epName', MAX_TARGET_STRING),
    libraries: o.list('libraries', MAX_PROBE_LIBRARIES).map((l, i) => {
      const lib = new FieldReader(fail, `${o.at('libraries')}[${i}]`, l)
      return { name: lib.text('name', MAX_TARGET_STRING), path: lib.text('path', MAX_TARGET_STRING) }
    })
  }
}

/** Sends `message` to the parent, then exits (ORT's native threads would otherwise keep the child alive). */
function reply(message: ProbeMessage, code: number): void {
  if (process.send === undefined) {
    process.stderr.write('probe-child: no IPC channel (start it through probe.ts)\n')
    process.exit(2)
  }
  process.send(message, () => process.exit(code))
}

const arg = process.argv[2]
if (arg === undefined || arg === '') {
  reply({ type: 'error', message: 'probe child started without an EP name' }, 2)
} else {
  Promise.resolve()
    .then(() => probeEpInProcess(parseTarget(arg)))
    .then(
    (result) => reply({ type: 'result', result }, 0),
    (e: unknown) => reply({ type: 'error', message: shortMessage(e) }, 1)
  )
}
