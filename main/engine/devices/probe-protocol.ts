/**
 * @file The one message a probe child sends its parent over the IPC channel, and its validation: the
 * parent trusts nothing that crosses the process boundary until it has the expected shape.
 */
import { FieldReader, failWith, type Fail } from '../../common/reader'
import type { EpProbeResult, ProbeCheck } from './device'

/** Most checks one probe reports (basic graph + one per contrib op, with room to grow). */
export const MAX_PROBE_CHECKS = 32
/** Longest string accepted from a probe child (EP names, check names, ORT messages). */
export const MAX_PROBE_STRING_CHARS = 4096

/** Child -> parent: the probe's result, or why the probe itself could not run. */
export type ProbeMessage = { readonly type: 'result'; readonly result: EpProbeResult } | { readonly type: 'error'; readonly message: string }

/** Thrown when a probe child sends something that is not a ProbeMessage. */
export class ProbeProtocolError extends Error {
  override readonly name = 'ProbeProtocolError'
}

const fail = failWith((message) => new ProbeProtocolError(`probe message: ${message}`))

/** Reads one probe check at `path` (also used for the checks of a device list crossing into a worker). */
export function readProbeCheck(fail: Fail, path: string, v: unknown): ProbeCheck {
  const o = new FieldReader(fail, path, v)
  return {
    name: o.text('name', MAX_PROBE_STRING_CHARS),
    ok: o.bool('ok'),
    maxAbsError: o.numberOrNull('maxAbsError', 0, Infinity),
    ms: o.number('ms', 0, Infinity),
    error: o.textOrNull('error', MAX_PROBE_STRING_CHARS)
  }
}

/** Validates an EpProbeResult (e.g. decoded from JSON). */
export function parseEpProbeResult(v: unknown): EpProbeResult {
  return readEpProbeResult(fail, 'result', v)
}

function readEpProbeResult(fail: Fail, path: string, v: unknown): EpProbeResult {
  const o = new FieldReader(fail, path, v)
  return {
    ep: o.text('ep', MAX_PROBE_STRING_CHARS),
    ok: o.bool('ok'),
    reason: o.textOrNull('reason', MAX_PROBE_STRING_CHARS),
    staticShapesOnly: o.bool('staticShapesOnly'),
    checks: o.list('checks', MAX_PROBE_CHECKS).map((c, i) => readProbeCheck(fail, `${o.at('checks')}[${i}]`, c)),
    probeMs: o.number('probeMs', 0, Infinity)
  }
}

/** Validates a message from a probe child. */
export function parseProbeMessage(v: unknown): ProbeMessage {
  const o = new FieldReader(fail, 'message', v)
  const type = o.choice('type', ['result', 'error'])
  if (type === 'result') return { type, result: readEpProbeResult(fail, o.at('result'), o.raw('result')) }
  return { type, message: o.text('message', MAX_PROBE_STRING_CHARS) }
}
