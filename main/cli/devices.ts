/**
 * @file `tandem devices`: the compute devices this machine offers the engine, probed in child processes,
 * as a table (or one JSON array with --json). A failed or unavailable device is listed with its reason.
 */
import { CONTRIB_OPS, discoverAllDevices, type DeviceContract, type DeviceInfo, type ProviderLibraryStatus } from '../engine'
import { providerOptions, type DevicesArgs } from './args'

/**
 * Runs `tandem devices`; returns the exit code (0 even when some devices failed: that is the answer). Provider
 * libraries that fail to register are reported on stderr with the runtime's reason.
 */
export async function devices(args: DevicesArgs): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`${line}\n`)
  const { devices: list, libraries } = await discoverAllDevices(providerOptions(args.providers), { probe: args.probe, timeoutMs: args.timeoutMs, log })
  reportFailedLibraries(libraries, log)
  if (args.json) {
    process.stdout.write(JSON.stringify(list) + '\n')
    return 0
  }
  process.stdout.write(formatDeviceTable(list))
  return 0
}

/** One line per provider library that did not register, with ONNX Runtime's reason. */
export function reportFailedLibraries(libraries: readonly ProviderLibraryStatus[], log: (line: string) => void): void {
  for (const lib of libraries) if (!lib.ok) log(`provider library "${lib.name}" (${lib.path || 'not built'}) failed: ${lib.reason}`)
}

/** "128 MiB" for a byte count. */
function sizeText(bytes: number): string {
  const mib = bytes / 1024 ** 2
  return mib >= 1024 ? `${(mib / 1024).toFixed(1)} GiB` : `${Math.round(mib)} MiB`
}

/** One-line summary of a device's contract. */
function contractText(c: DeviceContract, probed: boolean): string {
  const missing = CONTRIB_OPS.filter((op) => !c.supportsContribOps.includes(op))
  const contrib = !probed
    ? 'contrib: not probed'
    : missing.length === 0
      ? `contrib: all ${CONTRIB_OPS.length}`
      : `contrib: ${c.supportsContribOps.length}/${CONTRIB_OPS.length} (no ${missing.join(', ')})`
  return [
    c.staticShapesOnly ? 'static shapes' : 'dynamic shapes',
    c.int8Only ? 'int8 only' : 'fp32',
    `max tensor ${c.maxTensorBytes === null ? 'memory' : sizeText(c.maxTensorBytes)}`,
    contrib
  ].join(', ')
}

/** The devices as an aligned text table, then notes on shared compute. */
export function formatDeviceTable(list: readonly DeviceInfo[]): string {
  const header = ['ID', 'NAME', 'KIND', 'EP', 'STATUS', 'PROBE MS', 'CONTRACT', 'REASON']
  const rows = list.map((d) => [
    d.id,
    d.name,
    d.kind,
    d.ep,
    d.status,
    d.probeMs === null ? '-' : String(d.probeMs),
    d.status === 'unavailable' ? '-' : contractText(d.contract, d.probeMs !== null),
    d.reason ?? '-'
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd() + '\n'
  let out = line(header) + rows.map(line).join('')
  for (const d of list) {
    if (d.status !== 'unavailable' && d.sharesComputeWith.length > 0 && d.software) {
      out += `note: ${d.id} is not separate hardware; it shares compute with ${d.sharesComputeWith.join(', ')}\n`
    }
  }
  return out
}
