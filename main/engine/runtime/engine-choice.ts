/**
 * @file The one decision of which engine runs a placement. Everything on one CPU-EP device in both phases,
 * with no partition, is one ONNX session over the whole model (SingleSessionEngine: no per-segment
 * overhead, the fastest path on a CPU); anything else runs on device workers (DeviceWorkersEngine). The
 * model worker, the services and the CLI all ask this function; nobody decides by a device id.
 */
import type { DeviceInfo } from '../devices'
import type { ModelConfig } from '../model'
import { assignGroups, PHASES, type Placement } from '../plan'

/** Which engine runs a placement. */
export type EngineChoice = { readonly kind: 'single-session'; readonly device: DeviceInfo } | { readonly kind: 'device-workers' }

/** The engine for `placement` (already validated against `devices`). */
export function chooseEngine(placement: Placement, config: ModelConfig, devices: readonly DeviceInfo[]): EngineChoice {
  const ids = new Set<string>()
  for (const phase of PHASES) {
    const assignments = assignGroups(placement.phases[phase], config)
    if (assignments.some((a) => a.partition !== null)) return { kind: 'device-workers' }
    for (const a of assignments) ids.add(a.device)
  }
  const [only] = ids
  const device = ids.size === 1 ? devices.find((d) => d.id === only) : undefined
  return device !== undefined && device.ep === 'cpu' ? { kind: 'single-session', device } : { kind: 'device-workers' }
}
