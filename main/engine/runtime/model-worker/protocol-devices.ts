/**
 * @file Validates the device list that crosses into the model worker (the caller discovered the devices;
 * the worker needs them to re-validate the placement with parsePlacement): every field checked, nothing cast.
 */
import { CONTRIB_OPS, parseEpProbeResult, type ContribOp, type DeviceInfo, type DeviceKind, type DeviceStatus } from '../../devices'
import { ProtocolError } from '../errors'
import { isRecord } from './protocol'

/** Most devices accepted in a list. */
export const MAX_WIRE_DEVICES = 64
/** Longest device string field (names, reasons, detection notes) accepted. */
const MAX_DEVICE_TEXT = 4096

const KINDS: readonly DeviceKind[] = ['cpu', 'igpu', 'dgpu', 'npu', 'software-gpu']
const STATUSES: readonly DeviceStatus[] = ['ready', 'failed', 'unavailable', 'unprobed']

function text(o: Record<string, unknown>, key: string): string {
  const v = o[key]
  if (typeof v !== 'string' || v.length > MAX_DEVICE_TEXT) throw new ProtocolError(`device ${key} must be a string of at most ${MAX_DEVICE_TEXT} characters`)
  return v
}

function textOrNull(o: Record<string, unknown>, key: string): string | null {
  return o[key] === null ? null : text(o, key)
}

function bool(o: Record<string, unknown>, key: string): boolean {
  const v = o[key]
  if (typeof v !== 'boolean') throw new ProtocolError(`device ${key} must be a boolean`)
  return v
}

function numberOrNull(o: Record<string, unknown>, key: string): number | null {
  const v = o[key]
  if (v === null) return null
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ProtocolError(`device ${key} must be null or a finite number ≥ 0`)
  return v
}

function pick<T extends string>(v: unknown, choices: readonly T[], what: string): T {
  const hit = choices.find((c) => c === v)
  if (hit === undefined) throw new ProtocolError(`device ${what} must be one of ${choices.join(', ')}, got ${String(v)}`)
  return hit
}

function strings(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || v.length > MAX_WIRE_DEVICES) throw new ProtocolError(`device ${what} must be an array of at most ${MAX_WIRE_DEVICES} strings`)
  return v.map((s: unknown) => {
    if (typeof s !== 'string' || s.length > MAX_DEVICE_TEXT) throw new ProtocolError(`device ${what} must hold strings`)
    return s
  })
}

function parseDevice(v: unknown): DeviceInfo {
  if (!isRecord(v)) throw new ProtocolError('a device must be an object')
  const c = v.contract
  if (!isRecord(c)) throw new ProtocolError('device contract must be an object')
  const ops: ContribOp[] = strings(c.supportsContribOps, 'contract.supportsContribOps').map((s) => pick(s, CONTRIB_OPS, 'contract op'))
  let checks
  try {
    checks = parseEpProbeResult({ ep: 'wire', ok: true, reason: null, staticShapesOnly: false, checks: v.checks, probeMs: 0 }).checks
  } catch (err) {
    throw new ProtocolError(`device checks: ${err instanceof Error ? err.message : String(err)}`)
  }
  return {
    id: text(v, 'id'),
    name: text(v, 'name'),
    ep: text(v, 'ep'),
    kind: pick(v.kind, KINDS, 'kind'),
    software: bool(v, 'software'),
    sharesComputeWith: strings(v.sharesComputeWith, 'sharesComputeWith'),
    contract: {
      staticShapesOnly: bool(c, 'staticShapesOnly'),
      int8Only: bool(c, 'int8Only'),
      maxTensorBytes: numberOrNull(c, 'maxTensorBytes'),
      supportsContribOps: ops
    },
    status: pick(v.status, STATUSES, 'status'),
    reason: textOrNull(v, 'reason'),
    detection: text(v, 'detection'),
    probeMs: numberOrNull(v, 'probeMs'),
    checks
  }
}

/** Validates a device list received across a boundary. */
export function parseDeviceList(v: unknown): DeviceInfo[] {
  if (!Array.isArray(v) || v.length > MAX_WIRE_DEVICES) throw new ProtocolError(`devices must be an array of at most ${MAX_WIRE_DEVICES}`)
  return v.map(parseDevice)
}
