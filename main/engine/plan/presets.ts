/**
 * @file The placements offered in the settings panel. Each is a function of the model and this machine's
 * devices (picked by kind: npu, then dgpu/igpu/software-gpu, then cpu), returning a valid Placement and a
 * one-sentence note whenever it could not do literally what its name says ("No NPU found, so prefill runs
 * on the software GPU instead."). Groups a device's contract refuses go to the next device that takes them,
 * and the note says so. Auto is the solver, and needs a profile.
 */
import type { DeviceInfo } from '../devices'
import type { GroupKind } from '../graph'
import type { ModelConfig } from '../model'
import { FLOAT32_WEIGHTS, groupRefusal, type WeightInfo } from './contract'
import { predictAssignments } from './cost'
import { deviceLabel, GPU_KINDS, listWords, pickByKind, readyCpu, sentence, sharesCompute, spread, type Spread } from './device-pick'
import {
  assignGroups,
  defaultPrefillChunkTokens,
  FINAL_GROUPS,
  isMatmulGroup,
  MATMUL_GROUPS,
  PLACEMENT_VERSION,
  staticChunkRange,
  type Partition,
  type PhasePlacement,
  type Placement
} from './placement'
import type { Profile } from './profile'
import { rowCuts, rowShareOf } from './rows'
import { solvePlacement } from './solver'
import { parsePlacement } from './validate'

/** The presets, in the order the settings panel lists them. */
export const PRESET_IDS = ['cpu', 'gpu', 'npu-prefill-gpu-decode', 'layer-split', 'tensor-split', 'auto'] as const

/** One of PRESET_IDS. */
export type PresetId = (typeof PRESET_IDS)[number]

/** Display names of the presets (also the placements' names). */
export const PRESET_LABELS: Readonly<Record<PresetId, string>> = Object.freeze({
  cpu: 'CPU only',
  gpu: 'GPU only',
  'npu-prefill-gpu-decode': 'Prefill on NPU, decode on GPU',
  'layer-split': 'Layer split',
  'tensor-split': 'Tensor split',
  auto: 'Auto'
})

/** Options shared by the presets. */
export interface PresetOptions {
  /** how the matmul weights are stored (contract checks); default float32 */
  readonly weights?: WeightInfo
  /**
   * default DEFAULT_PREFILL_CHUNK_TOKENS capped by the context length, or STATIC_CHUNK_TOKENS.default when a
   * preset that can put prefill on a ready static-shape device (an NPU) has one to use
   */
  readonly prefillChunkTokens?: number
  /** measured times: required by Auto; lets the NPU preset's fallback pick the fastest device */
  readonly profile?: Profile
}

/** A preset's placement and, when it had to deviate from its name, a one-sentence note saying how. */
export interface PresetResult {
  readonly placement: Placement
  readonly note: string | null
}

/** What every preset builder shares. */
interface Ctx {
  readonly config: ModelConfig
  readonly devices: readonly DeviceInfo[]
  readonly weights: WeightInfo
  readonly chunk: number
  readonly cpu: DeviceInfo
  readonly label: (d: DeviceInfo) => string
}

/** "the NPU cannot take rope and attention, so they run on the GPU" for each destination. */
function movedClauses(from: DeviceInfo, s: Spread, ctx: Ctx): string[] {
  const byDevice = new Map<string, GroupKind[]>()
  for (const m of s.moved) byDevice.set(m.device, [...(byDevice.get(m.device) ?? []), m.group])
  return [...byDevice].map(([id, groups]) => `the ${ctx.label(from)} cannot take ${listWords(groups)}, so ${groups.length === 1 ? 'it runs' : 'they run'} on the ${deviceLabel(id, ctx.devices)}`)
}

function finish(id: PresetId, prefill: PhasePlacement, decode: PhasePlacement, clauses: readonly string[], ctx: Ctx): PresetResult {
  const draft: Placement = { version: PLACEMENT_VERSION, name: PRESET_LABELS[id], prefillChunkTokens: ctx.chunk, phases: { prefill, decode } }
  // presets build only what the validator accepts; check rather than trust
  return { placement: parsePlacement(draft, ctx.config, ctx.devices, ctx.weights), note: sentence([...new Set(clauses)]) }
}

/** Everything on `target` (groups it refuses on the CPU), with the moved-group clauses. */
function allOn(target: DeviceInfo, ctx: Ctx): { phase: PhasePlacement; clauses: string[] } {
  const s = spread(ctx.config, ctx.weights, () => target, [ctx.cpu])
  return { phase: s.phase, clauses: movedClauses(target, s, ctx) }
}

function cpuOnly(ctx: Ctx): PresetResult {
  const { phase, clauses } = allOn(ctx.cpu, ctx)
  return finish('cpu', phase, phase, clauses, ctx)
}

function gpuOnly(ctx: Ctx): PresetResult {
  const gpu = pickByKind(ctx.devices, GPU_KINDS)
  const { phase, clauses } = allOn(gpu ?? ctx.cpu, ctx)
  return finish('gpu', phase, phase, [...(gpu === null ? ['no GPU found, so everything runs on the CPU instead'] : []), ...clauses], ctx)
}

/** The ready device with the least predicted single-device prefill, from a profile (null without one). */
function fastestPrefill(ctx: Ctx, profile: Profile | undefined): DeviceInfo | null {
  if (profile === undefined) return null
  let best: { device: DeviceInfo; ms: number } | null = null
  for (const d of ctx.devices) {
    if (d.status !== 'ready') continue
    const phase: PhasePlacement = { device: d.id, groups: [], partitions: [] }
    const assignments = assignGroups(phase, ctx.config)
    if (assignments.some((a) => groupRefusal(d, a.group.kind, ctx.config, ctx.weights) !== null)) continue
    const r = predictAssignments(assignments, ctx.chunk, { config: ctx.config, profile, devices: ctx.devices })
    if (r.ok && (best === null || r.ms < best.ms)) best = { device: d, ms: r.ms }
  }
  return best?.device ?? null
}

function npuPrefillGpuDecode(ctx: Ctx, profile: Profile | undefined): PresetResult {
  const gpu = pickByKind(ctx.devices, GPU_KINDS)
  const decodeOn = gpu ?? ctx.cpu
  const decode = allOn(decodeOn, ctx)
  const clauses: string[] = []
  const npu = pickByKind(ctx.devices, ['npu'])
  let prefill: PhasePlacement
  if (npu !== null) {
    const s = spread(ctx.config, ctx.weights, () => npu, [decodeOn, ctx.cpu])
    prefill = s.phase
    clauses.push(...movedClauses(npu, s, ctx))
  } else {
    const fallback = fastestPrefill(ctx, profile) ?? decodeOn
    clauses.push(`no NPU found, so prefill runs on the ${ctx.label(fallback)} instead`)
    const p = allOn(fallback, ctx)
    prefill = p.phase
    clauses.push(...p.clauses)
  }
  if (gpu === null) clauses.push('no GPU found, so decode runs on the CPU')
  clauses.push(...decode.clauses)
  return finish('npu-prefill-gpu-decode', prefill, decode.phase, clauses, ctx)
}

/** The two devices of a split: the strongest accelerator for the matmuls, and a different one for the rest. */
function splitPair(ctx: Ctx): { first: DeviceInfo; second: DeviceInfo | null; npu: boolean } {
  const npu = pickByKind(ctx.devices, ['npu'])
  const first = npu ?? pickByKind(ctx.devices, GPU_KINDS) ?? ctx.cpu
  const candidates = [first.kind === 'npu' ? pickByKind(ctx.devices, GPU_KINDS) : null, ctx.cpu, pickByKind(ctx.devices, ['cpu'], [ctx.cpu.id])]
  const second = candidates.find((d) => d !== null && d.id !== first.id) ?? null
  return { first, second, npu: npu !== null }
}

/** Clauses about the pair: which devices stand in for the NPU, and whether they share cores. */
function pairClauses(first: DeviceInfo, second: DeviceInfo, npu: boolean, what: (a: string, b: string) => string, ctx: Ctx): string[] {
  const clauses = npu ? [] : [`no NPU found, so ${what(ctx.label(first), ctx.label(second))}`]
  if (sharesCompute(first, second)) clauses.push(`the ${ctx.label(first)} and the ${ctx.label(second)} share the same CPU cores, so expect no speed-up`)
  return clauses
}

function layerSplit(ctx: Ctx): PresetResult {
  const { first, second, npu } = splitPair(ctx)
  if (second === null) {
    const { phase, clauses } = allOn(first, ctx)
    return finish('layer-split', phase, phase, ['only one device is ready, so nothing is split', ...clauses], ctx)
  }
  const s = spread(ctx.config, ctx.weights, (kind) => (isMatmulGroup(kind) ? first : second), [second, ctx.cpu])
  const clauses = [...pairClauses(first, second, npu, (a, b) => `matmuls run on the ${a} and everything else on the ${b}`, ctx), ...movedClauses(first, { phase: s.phase, moved: s.moved.filter((m) => isMatmulGroup(m.group)) }, ctx), ...movedClauses(second, { phase: s.phase, moved: s.moved.filter((m) => !isMatmulGroup(m.group)) }, ctx)]
  return finish('layer-split', s.phase, s.phase, clauses, ctx)
}

/** One phase of the tensor split: the rest on `b`, every matmul group partitioned half and half. */
function tensorPhase(a: DeviceInfo, b: DeviceInfo, prefill: boolean, ctx: Ctx): { phase: PhasePlacement; unsplit: GroupKind[] } {
  const base = spread(ctx.config, ctx.weights, () => b, [a, ctx.cpu]).phase
  const partitions: Partition[] = []
  const unsplit: GroupKind[] = []
  for (const group of MATMUL_GROUPS) {
    const layer = FINAL_GROUPS.includes(group) ? 'final' : 'all'
    const ok = (share: number, shareB: number): boolean => groupRefusal(a, group, ctx.config, ctx.weights, share) === null && groupRefusal(b, group, ctx.config, ctx.weights, shareB) === null
    // a static-shape device (an NPU) takes a fixed share of each chunk; the other device the rest
    if (prefill && a.contract.staticShapesOnly && group !== 'lm-head' && ctx.chunk >= 2 && !b.contract.staticShapesOnly && ok(1, 1)) {
      partitions.push({ layer, group, by: 'sequence', devices: [a.id, b.id], standardLength: Math.floor(ctx.chunk / 2) })
      continue
    }
    const cuts = rowCuts(group, 0.5, ctx.config)
    if (typeof cuts !== 'string' && ok(rowShareOf(cuts), 1 - rowShareOf(cuts))) partitions.push({ layer, group, by: 'rows', devices: [a.id, b.id], ratio: 0.5 })
    else unsplit.push(group)
  }
  return { phase: { ...base, partitions }, unsplit }
}

function tensorSplit(ctx: Ctx): PresetResult {
  const { first, second, npu } = splitPair(ctx)
  if (second === null) {
    const { phase, clauses } = allOn(first, ctx)
    return finish('tensor-split', phase, phase, ['only one device is ready, so nothing is split', ...clauses], ctx)
  }
  const prefill = tensorPhase(first, second, true, ctx)
  const decode = tensorPhase(first, second, false, ctx)
  const unsplit = [...new Set([...prefill.unsplit, ...decode.unsplit])]
  const clauses = pairClauses(first, second, npu, (a, b) => `matmuls are split between the ${a} and the ${b}, and the rest runs on the ${b}`, ctx)
  if (unsplit.length > 0) clauses.push(`${listWords(unsplit)} cannot be split between them, so ${unsplit.length === 1 ? 'it runs' : 'they run'} whole on the ${ctx.label(second)}`)
  return finish('tensor-split', prefill.phase, decode.phase, clauses, ctx)
}

/** Presets that put prefill on an NPU when there is one; an NPU's graphs take the static chunk. */
const NPU_PREFILL_PRESETS: readonly PresetId[] = ['npu-prefill-gpu-decode', 'layer-split', 'tensor-split', 'auto']

function defaultChunk(id: PresetId, config: ModelConfig, devices: readonly DeviceInfo[]): number {
  const staticReady = devices.some((d) => d.status === 'ready' && d.contract.staticShapesOnly)
  return staticReady && NPU_PREFILL_PRESETS.includes(id) ? staticChunkRange(config).defaultTokens : defaultPrefillChunkTokens(config)
}

/** Builds a preset for this model and these devices; Auto needs `options.profile`. Throws PlacementError. */
export function buildPreset(id: PresetId, config: ModelConfig, devices: readonly DeviceInfo[], options: PresetOptions = {}): PresetResult {
  const weights = options.weights ?? FLOAT32_WEIGHTS
  const chunk = options.prefillChunkTokens ?? defaultChunk(id, config, devices)
  const ctx: Ctx = { config, devices, weights, chunk, cpu: readyCpu(devices), label: (d) => deviceLabel(d.id, devices) }
  switch (id) {
    case 'cpu':
      return cpuOnly(ctx)
    case 'gpu':
      return gpuOnly(ctx)
    case 'npu-prefill-gpu-decode':
      return npuPrefillGpuDecode(ctx, options.profile)
    case 'layer-split':
      return layerSplit(ctx)
    case 'tensor-split':
      return tensorSplit(ctx)
    case 'auto': {
      if (options.profile === undefined) throw new Error('the Auto placement needs a device profile (measure the devices first)')
      const solution = solvePlacement(config, devices, options.profile, { weights, prefillChunkTokens: chunk, name: PRESET_LABELS.auto })
      return { placement: solution.placement, note: solution.explanation }
    }
  }
}
