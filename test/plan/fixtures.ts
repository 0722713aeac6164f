/**
 * @file Plan test inputs: model shapes, device lists (this machine's shape — cpu, cpu-2 and webgpu-0 on Mesa
 * lavapipe, all sharing the CPU — and synthetic machines with an NPU), and synthetic profiles.
 */
import { CONTRIB_OPS, type ContribOp, type DeviceContract, type DeviceInfo, type DeviceKind, type DeviceStatus } from '../../main/engine/devices'
import type { GroupKind } from '../../main/engine/graph'
import type { ModelConfig } from '../../main/engine/model'
import { modelShapeKey, OP_GROUP_NAMES, type LinkProfile, type Profile } from '../../main/engine/plan'

/** A stories260K-shaped llama config (dim 64, 5 layers, GQA 8/4 heads of 8), with overrides. */
export function testConfig(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    architecture: 'llama',
    dim: 64,
    hiddenDim: 172,
    nLayers: 5,
    nHeads: 8,
    nKvHeads: 4,
    headDim: 8,
    vocabSize: 512,
    contextLength: 512,
    normEps: 1e-5,
    ropeTheta: 10000,
    ropePairing: 'adjacent',
    ropeDim: 8,
    ropeScaling: null,
    ropeFreqFactors: null,
    tiedEmbeddings: true,
    qkvBias: false,
    ...overrides
  }
}

/** What `device()` may override. */
export interface DeviceSpec {
  readonly status?: DeviceStatus
  readonly software?: boolean
  readonly sharesComputeWith?: readonly string[]
  readonly contract?: Partial<DeviceContract>
  readonly ep?: string
}

/** A DeviceInfo as discovery would report it (ready, every contrib op, no limits unless given). */
export function device(id: string, kind: DeviceKind, spec: DeviceSpec = {}): DeviceInfo {
  const status = spec.status ?? 'ready'
  return {
    id,
    name: `${kind} ${id}`,
    ep: spec.ep ?? id.replace(/-\d+$/, ''),
    kind,
    software: spec.software ?? false,
    status,
    reason: status === 'ready' ? null : `test device is ${status}`,
    probeMs: 1,
    contract: { staticShapesOnly: false, int8Only: false, maxTensorBytes: null, supportsContribOps: [...CONTRIB_OPS], ...spec.contract },
    sharesComputeWith: spec.sharesComputeWith ?? [],
    detection: 'test fixture',
    checks: []
  }
}

/** This machine as discovery reports it with probing (see test/devices/discover.test.ts). */
export function thisMachine(): DeviceInfo[] {
  return [
    device('cpu', 'cpu', { sharesComputeWith: ['cpu-2', 'webgpu-0'] }),
    device('cpu-2', 'cpu', { ep: 'cpu', software: true, sharesComputeWith: ['cpu', 'webgpu-0'] }),
    device('webgpu-0', 'software-gpu', { software: true, sharesComputeWith: ['cpu', 'cpu-2'], contract: { maxTensorBytes: 128 * 2 ** 20 } }),
    device('cuda-0', 'dgpu', { status: 'unavailable', contract: { supportsContribOps: [] } }),
    device('tensorrt-0', 'dgpu', { status: 'unavailable', contract: { supportsContribOps: [] } })
  ]
}

/** A QNN-style NPU: int8-only, static shapes, no contrib ops. */
export function npuDevice(id = 'qnn-0'): DeviceInfo {
  const ops: ContribOp[] = []
  return device(id, 'npu', { contract: { int8Only: true, staticShapesOnly: true, supportsContribOps: ops } })
}

/** A laptop with an NPU, an integrated GPU and the CPU. */
export function npuLaptop(): DeviceInfo[] {
  return [device('cpu', 'cpu'), device('dml-0', 'igpu'), npuDevice()]
}

/** How long one group takes on a synthetic device: fixed + perToken · tokens (ms). */
export interface GroupCost {
  readonly fixedMs: number
  readonly perTokenMs: number
}

/** A synthetic device profile: a cost per group kind (unlisted kinds cost `rest`), and the run overhead. */
export interface SyntheticDevice {
  readonly groups?: Partial<Record<GroupKind, GroupCost>>
  readonly rest?: GroupCost
  readonly runOverheadMs?: number
}

/** Token counts the synthetic profiles sample at. */
export const SAMPLE_TOKENS = [1, 16, 64, 256]

/** A Profile from linear synthetic costs (exact at every token count, so hand computations hold). */
export function syntheticProfile(config: ModelConfig, devices: Record<string, SyntheticDevice>, links: LinkProfile[] = [], defaultLink = { fixedMs: 0, msPerMiB: 0 }): Profile {
  return {
    version: 1,
    modelShape: modelShapeKey(config),
    devices: Object.entries(devices).map(([id, d]) => ({
      device: id,
      runOverheadMs: d.runOverheadMs ?? 0,
      groups: OP_GROUP_NAMES.map((group) => {
        const c = d.groups?.[group] ?? d.rest ?? { fixedMs: 0, perTokenMs: 0 }
        return { group, samples: SAMPLE_TOKENS.map((tokens) => ({ tokens, ms: c.fixedMs + c.perTokenMs * tokens })) }
      })
    })),
    links,
    defaultLink
  }
}
