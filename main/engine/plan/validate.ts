/**
 * @file The strict reader from untrusted JSON (a settings file, the UI, an HTTP body) to a Placement that
 * can run on this model and these devices. It reads the shape first (shape.ts, no model needed), then checks
 * the meaning: layer indexes and the chunk fit the model, every device exists and is ready, every group
 * lands on a device whose contract takes it, and every partition splits a matmul group in a way both
 * devices can run. Errors name the field.
 */
import type { DeviceInfo } from '../devices'
import { modelOpGroups, type GroupKind } from '../graph'
import type { ModelConfig } from '../model'
import { deviceRefusal, FLOAT32_WEIGHTS, groupRefusal, type WeightInfo } from './contract'
import { readInteger, type Fail } from '../../common/reader'
import { layerMatches, maxPrefillChunkTokens, phaseDevices, PlacementError, staticChunkRange, type LayerRef, type Partition, type PhasePlacement, type Placement } from './placement'
import { rowCuts, rowShareOf } from './rows'
import { parsePlacementShape } from './shape'

const fail: Fail = (path, detail) => {
  throw new PlacementError(path, detail)
}

/** What every check of one placement needs. */
interface Ctx {
  readonly config: ModelConfig
  readonly devices: readonly DeviceInfo[]
  readonly weights: WeightInfo
}

/**
 * Reads `json` into a Placement valid for `config` on `devices` (the quantization of the weights decides
 * whether matmuls need MatMulNBits and how big they are; float32 when not given). Throws PlacementError.
 */
export function parsePlacement(json: unknown, config: ModelConfig, devices: readonly DeviceInfo[], weights: WeightInfo = FLOAT32_WEIGHTS): Placement {
  const placement = parsePlacementShape(json)
  readInteger(fail, 'prefillChunkTokens', placement.prefillChunkTokens, 1, maxPrefillChunkTokens(config))
  const ctx: Ctx = { config, devices, weights }
  checkPhase('phases.prefill', placement.phases.prefill, ctx)
  checkPhase('phases.decode', placement.phases.decode, ctx)
  checkStaticChunk(placement, ctx)
  return placement
}

/** A static-shape device in prefill has its graphs compiled for the chunk: it must be in staticChunkRange. */
function checkStaticChunk(placement: Placement, ctx: Ctx): void {
  const ids = phaseDevices(placement.phases.prefill, ctx.config)
  const device = ctx.devices.find((d) => ids.includes(d.id) && d.contract.staticShapesOnly)
  if (device === undefined) return
  const { min, max } = staticChunkRange(ctx.config)
  const chunk = placement.prefillChunkTokens
  if (chunk < min || chunk > max) fail('prefillChunkTokens', `device ${JSON.stringify(device.id)} runs static-shape graphs compiled for the chunk, which must be from ${min} to ${max} tokens, got ${chunk}`)
}

/** The device with this id, which must exist on this machine and be ready. */
function readyDevice(path: string, id: string, ctx: Ctx): DeviceInfo {
  const device = ctx.devices.find((d) => d.id === id)
  if (device === undefined) fail(path, `unknown device ${JSON.stringify(id)} (devices here: ${ctx.devices.map((d) => d.id).join(', ') || 'none'})`)
  const refusal = deviceRefusal(device)
  if (refusal !== null) fail(path, refusal)
  return device
}

/** A layer index must be one of the model's layers ('all' and 'final' always fit). */
function checkLayer(path: string, ref: LayerRef, config: ModelConfig): void {
  if (typeof ref === 'number') readInteger(fail, path, ref, 0, config.nLayers - 1)
}

function checkGroup(path: string, device: DeviceInfo, kind: GroupKind, ctx: Ctx, rowShare = 1): void {
  const refusal = groupRefusal(device, kind, ctx.config, ctx.weights, rowShare)
  if (refusal !== null) fail(path, refusal)
}

function checkPartition(path: string, p: Partition, ctx: Ctx): void {
  checkLayer(`${path}.layer`, p.layer, ctx.config)
  const a = readyDevice(`${path}.devices[0]`, p.devices[0], ctx)
  const b = readyDevice(`${path}.devices[1]`, p.devices[1], ctx)
  if (p.by === 'rows') {
    const cuts = rowCuts(p.group, p.ratio, ctx.config)
    if (typeof cuts === 'string') fail(`${path}.ratio`, cuts)
    const share = rowShareOf(cuts)
    checkGroup(`${path}.devices[0]`, a, p.group, ctx, share)
    checkGroup(`${path}.devices[1]`, b, p.group, ctx, 1 - share)
    return
  }
  // devices[1] takes whatever is left of each chunk, a length that varies
  if (b.contract.staticShapesOnly) fail(`${path}.devices[1]`, `device ${JSON.stringify(b.id)} needs static shapes, but the remainder of a chunk varies in length; put it first`)
  checkGroup(`${path}.devices[0]`, a, p.group, ctx, 1)
  checkGroup(`${path}.devices[1]`, b, p.group, ctx, 1)
}

/** Instances (`layer:kind`) a layer reference covers. */
function instances(ref: LayerRef, kind: GroupKind, config: ModelConfig): string[] {
  if (ref === 'final') return [`final:${kind}`]
  if (ref === 'all') return Array.from({ length: config.nLayers }, (_, l) => `${l}:${kind}`)
  return [`${ref}:${kind}`]
}

function checkPhase(path: string, phase: PhasePlacement, ctx: Ctx): void {
  readyDevice(`${path}.device`, phase.device, ctx)
  phase.groups.forEach((o, i) => {
    checkLayer(`${path}.groups[${i}].layer`, o.layer, ctx.config)
    readyDevice(`${path}.groups[${i}].device`, o.device, ctx)
  })
  phase.partitions.forEach((p, i) => checkPartition(`${path}.partitions[${i}]`, p, ctx))
  if (phase.shadow !== undefined) {
    const shadow = readyDevice(`${path}.shadow`, phase.shadow, ctx)
    if (shadow.ep !== 'cpu') fail(`${path}.shadow`, `device ${JSON.stringify(shadow.id)} is not a CPU; shadow segments gather the channels that clipped in each run, a data-dependent shape only the CPU's execution provider runs`)
  }
  const claimed = new Map<string, number>()
  phase.partitions.forEach((p, i) => {
    for (const key of instances(p.layer, p.group, ctx.config)) {
      const first = claimed.get(key)
      if (first !== undefined) fail(`${path}.partitions[${i}]`, `${key.replace(':', ' ')} is already partitioned by ${path}.partitions[${first}]`)
      claimed.set(key, i)
    }
  })
  // every unpartitioned group must be runnable where the default and the overrides put it
  for (const group of modelOpGroups(ctx.config)) {
    if (phase.partitions.some((p) => p.group === group.kind && layerMatches(p.layer, group))) continue
    let source = `${path}.device`
    let id = phase.device
    phase.groups.forEach((o, i) => {
      if (o.group === group.kind && layerMatches(o.layer, group)) {
        source = `${path}.groups[${i}]`
        id = o.device
      }
    })
    const target = ctx.devices.find((d) => d.id === id)
    if (target === undefined) fail(source, `unknown device ${JSON.stringify(id)}`)
    const refusal = groupRefusal(target, group.kind, ctx.config, ctx.weights)
    if (refusal !== null) fail(source, `${group.layer === null ? 'final' : `layer ${group.layer}`} ${group.kind}: ${refusal}`)
  }
}
