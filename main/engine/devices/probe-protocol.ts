/**
 * @file The one message a probe child sends its parent over the IPC channel, and its validation: the
 * parent trusts nothing that crosses the process boundary until it has the expected shape.
 */
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

function field(v: object, key: string): unknown {
  return Object.hasOwn(v, key) ? Reflect.get(v, key) : undefined
}

function str(v: object, key: string): string {
  const s = field(v, key)
  if (typeof s !== 'string' || s.length > MAX_PROBE_STRING_CHARS) throw new ProbeProtocolError(`probe message: ${key} must be a string of ≤ ${MAX_PROBE_STRING_CHARS} chars`)
  return s
}

function strOrNull(v: object, key: string): string | null {
  return field(v, key) === null ? null : str(v, key)
}

function bool(v: object, key: string): boolean {
  const b = field(v, key)
  if (typeof b !== 'boolean') throw new ProbeProtocolError(`probe message: ${key} must be a boolean`)
  return b
}

function nonNegative(v: object, key: string): number {
  const n = field(v, key)
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new ProbeProtocolError(`probe message: ${key} must be a finite number ≥ 0`)
  return n
}

function record(v: unknown, what: string): object {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ProbeProtocolError(`probe message: ${what} must be an object`)
  return v
}

function parseCheck(v: unknown): ProbeCheck {
  const o = record(v, 'check')
  return {
    name: str(o, 'name'),
    ok: bool(o, 'ok'),
    maxAbsError: field(o, 'maxAbsError') === null ? null : nonNegative(o, 'maxAbsError'),
    ms: nonNegative(o, 'ms'),
    error: strOrNull(o, 'error')
  }
}

/** Validates an EpProbeResult (e.g. decoded from JSON). */
export function parseEpProbeResult(v: unknown): EpProbeResult {
  const o = record(v, 'result')
  const checks = field(o, 'checks')
  if (!Array.isArray(checks) || checks.length > MAX_PROBE_CHECKS) throw new ProbeProtocolError(`probe message: checks must be an array of ≤ ${MAX_PROBE_CHECKS}`)
  return {
    ep: str(o, 'ep'),
    ok: bool(o, 'ok'),
    reason: strOrNull(o, 'reason'),
    staticShapesOnly: bool(o, 'staticShapesOnly'),
    checks: checks.map(parseCheck),
    probeMs: nonNegative(o, 'probeMs')
  }
}

/** Validates a message from a probe child. */
export function parseProbeMessage(v: unknown): ProbeMessage {
  const o = record(v, 'message')
  const type = field(o, 'type')
  if (type === 'result') return { type, result: parseEpProbeResult(field(o, 'result')) }
  if (type === 'error') return { type, message: str(o, 'message') }
  throw new ProbeProtocolError(`probe message: unknown type ${JSON.stringify(type)}`)
}
