/**
 * @file Reads a device list that crossed a boundary (the caller discovered the devices; a worker or a child
 * process gets them to re-check a placement against): every field checked, nothing cast.
 */
import { FieldReader, readArray, readChoice, type Fail } from '../../common/reader'
import { CONTRIB_OPS, DEVICE_KINDS, DEVICE_STATUSES, type DeviceInfo } from './device'
import { MAX_PROBE_CHECKS, MAX_PROBE_STRING_CHARS, readProbeCheck } from './probe-protocol'

/** Most devices accepted in a list. */
export const MAX_LISTED_DEVICES = 64
/** Most provider options one device's sessions take (vendor providers have a dozen or so). */
export const MAX_PROVIDER_OPTIONS = 64
/** Longest device id accepted. */
export const MAX_DEVICE_ID_LENGTH = 64

function readDevice(fail: Fail, path: string, v: unknown): DeviceInfo {
  const d = new FieldReader(fail, path, v)
  const c = d.record('contract')
  return {
    id: d.string('id', MAX_DEVICE_ID_LENGTH),
    name: d.text('name', MAX_PROBE_STRING_CHARS),
    ep: d.string('ep', MAX_DEVICE_ID_LENGTH),
    kind: d.choice('kind', DEVICE_KINDS),
    software: d.bool('software'),
    sharesComputeWith: d.strings('sharesComputeWith', MAX_LISTED_DEVICES, MAX_DEVICE_ID_LENGTH),
    contract: {
      staticShapesOnly: c.bool('staticShapesOnly'),
      int8Only: c.bool('int8Only'),
      maxTensorBytes: c.numberOrNull('maxTensorBytes', 0, Number.MAX_SAFE_INTEGER),
      supportsContribOps: c.list('supportsContribOps', CONTRIB_OPS.length).map((op, i) => readChoice(fail, `${c.at('supportsContribOps')}[${i}]`, op, CONTRIB_OPS))
    },
    status: d.choice('status', DEVICE_STATUSES),
    reason: d.textOrNull('reason', MAX_PROBE_STRING_CHARS),
    detection: d.text('detection', MAX_PROBE_STRING_CHARS),
    probeMs: d.numberOrNull('probeMs', 0, Infinity),
    checks: d.list('checks', MAX_PROBE_CHECKS).map((check, i) => readProbeCheck(fail, `${d.at('checks')}[${i}]`, check)),
    ...(d.raw('providerOptions') === undefined ? {} : { providerOptions: d.stringMap('providerOptions', MAX_PROVIDER_OPTIONS, MAX_PROBE_STRING_CHARS) })
  }
}

/** Reads a device list at `path`; problems go to `fail` (the boundary's own error). */
export function readDeviceList(fail: Fail, path: string, v: unknown): DeviceInfo[] {
  return readArray(fail, path, v, MAX_LISTED_DEVICES).map((d, i) => readDevice(fail, `${path}[${i}]`, d))
}
