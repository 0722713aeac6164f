/**
 * @file The Auto placement: per phase, the least predicted time among
 *   - single-device placements (every ready, profiled device that can take every group),
 *   - layer splits (matmuls on one device, everything else on another),
 *   - tensor splits (devices a and b, the non-matmul groups on one of them; each matmul group wholly on a,
 *     wholly on b, partitioned by rows at a ratio from a grid, or — prefill — by sequence at a standard
 *     length from a grid), searched group by group (two passes of coordinate descent: the cost is nearly
 *     separable per group, so a full cross product would buy nothing but time).
 * Phases are chosen independently, so "prefill on one device, decode on another" comes out when it wins.
 * For a single partition this is HeteroInfer's min(max(T_a(p), T_b(1−p)) + T_sync, T_a(all), T_b(all)).
 * Failed, unavailable, unprobed and unprofiled devices are never considered.
 */
import type { DeviceInfo } from '../devices'
import type { GroupKind } from '../graph'
import type { ModelConfig } from '../model'
import { FLOAT32_WEIGHTS, groupRefusal, type WeightInfo } from './contract'
import { predictAssignments, predictPlacement, type CostContext } from './cost'
import { explainSolution, type Alternative, type MatmulChoice, type PhaseOutcome, type PhaseShape } from './explain'
import {
  assignGroups,
  defaultPrefillChunkTokens,
  FINAL_GROUPS,
  MATMUL_GROUPS,
  OP_GROUP_NAMES,
  PLACEMENT_VERSION,
  type GroupOverride,
  type MatmulGroup,
  type Partition,
  type Phase,
  type PhasePlacement,
  type Placement
} from './placement'
import { modelShapeKey, ProfileError, type Profile } from './profile'
import { rowCuts, rowShareOf } from './rows'
import { parsePlacement } from './validate'

/** Row shares tried for a row partition (share on the first device). */
export const DEFAULT_RATIO_GRID: readonly number[] = Object.freeze([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])

/** Fractions of the prefill chunk tried as a sequence partition's standard length. */
const SEQUENCE_FRACTIONS: readonly number[] = [1 / 8, 1 / 4, 3 / 8, 1 / 2, 5 / 8, 3 / 4, 7 / 8]

/** Coordinate-descent passes over the matmul groups of a tensor split. */
const TENSOR_PASSES = 2

/** Options for solvePlacement. */
export interface SolverOptions {
  /** prefill chunk (tokens); default DEFAULT_PREFILL_CHUNK_TOKENS capped by the context length */
  readonly prefillChunkTokens?: number
  /** how the matmul weights are stored (contract checks); default float32 */
  readonly weights?: WeightInfo
  /** row shares to try; default DEFAULT_RATIO_GRID */
  readonly ratioGrid?: readonly number[]
  /** the placement's name; default "Auto" */
  readonly name?: string
}

/** The chosen placement, its predicted times (ms per prefill chunk, ms per decode step) and why. */
export interface Solution {
  readonly placement: Placement
  readonly predictedMs: { readonly prefill: number; readonly decode: number }
  readonly explanation: string
}

/** Everything one solve shares. */
interface Search {
  readonly config: ModelConfig
  readonly cost: CostContext
  readonly weights: WeightInfo
  readonly chunk: number
  readonly ratios: readonly number[]
  readonly usable: readonly DeviceInfo[]
  /** device -> the group kinds its contract takes whole */
  readonly wholeGroups: ReadonlyMap<string, ReadonlySet<GroupKind>>
  /** `device|kind|share` -> whether the device's contract takes that share of a group's rows */
  readonly accepted: Map<string, boolean>
  /**
   * Cost contexts for the same model cut to 2 and 3 layers (null for models of ≤ 3 layers): every
   * candidate places each layer alike, so its cost is c2 + (L − 2)·(c3 − c2) exactly — the per-layer
   * part repeats, only layer 0 (fed by the runtime) and the final groups differ — at a fraction of the work
   */
  readonly proxies: readonly [CostContext, CostContext] | null
  /** `group|ratio` -> the row cuts (or why there are none) */
  readonly cuts: Map<string, ReturnType<typeof rowCuts>>
}

const layerOf = (kind: GroupKind): 'all' | 'final' => (FINAL_GROUPS.includes(kind) ? 'final' : 'all')

/** The PhasePlacement a shape stands for. */
function phaseOf(shape: PhaseShape): PhasePlacement {
  if (shape.kind === 'single') return { device: shape.device, groups: [], partitions: [] }
  if (shape.kind === 'layer-split') {
    const groups = MATMUL_GROUPS.map((g): GroupOverride => ({ layer: layerOf(g), group: g, device: shape.matmul }))
    return { device: shape.rest, groups, partitions: [] }
  }
  const groups: GroupOverride[] = []
  const partitions: Partition[] = []
  for (const g of MATMUL_GROUPS) {
    const c = shape.choices[g]
    const layer = layerOf(g)
    if ('on' in c) {
      const device = c.on === 'a' ? shape.a : shape.b
      if (device !== shape.rest) groups.push({ layer, group: g, device })
    } else if (c.by === 'rows') partitions.push({ layer, group: g, by: 'rows', devices: [shape.a, shape.b], ratio: c.ratio })
    else partitions.push({ layer, group: g, by: 'sequence', devices: [shape.a, shape.b], standardLength: c.standardLength })
  }
  return { device: shape.rest, groups, partitions }
}

/** Predicted ms of a shape in a phase, or null when a device cannot take its groups or is not profiled. */
function evaluate(shape: PhaseShape, phase: Phase, s: Search): number | null {
  const placement = phaseOf(shape)
  const byId = (id: string): DeviceInfo | undefined => s.usable.find((d) => d.id === id)
  const accepts = (id: string, kind: GroupKind, share: number): boolean => {
    const key = `${id}|${kind}|${share}`
    let ok = s.accepted.get(key)
    if (ok === undefined) {
      const d = byId(id)
      ok = d !== undefined && groupRefusal(d, kind, s.config, s.weights, share) === null
      s.accepted.set(key, ok)
    }
    return ok
  }
  const cutsOf = (group: MatmulGroup, ratio: number): ReturnType<typeof rowCuts> => {
    const key = `${group}|${ratio}`
    let cuts = s.cuts.get(key)
    if (cuts === undefined) s.cuts.set(key, (cuts = rowCuts(group, ratio, s.config)))
    return cuts
  }
  // every candidate places all layers alike, so a 2-layer model shows every group's feasibility
  const assignments = assignGroups(placement, s.proxies?.[0].config ?? s.config)
  for (const a of assignments) {
    const p = a.partition
    if (p === null) {
      if (s.wholeGroups.get(a.device)?.has(a.group.kind) !== true) return null
    } else if (p.by === 'rows') {
      const cuts = cutsOf(p.group, p.ratio)
      if (typeof cuts === 'string') return null
      const share = rowShareOf(cuts)
      if (!accepts(p.devices[0], p.group, share) || !accepts(p.devices[1], p.group, 1 - share)) return null
    } else {
      if (phase !== 'prefill' || p.group === 'lm-head' || p.standardLength < 1 || p.standardLength >= s.chunk) return null
      if (byId(p.devices[1])?.contract.staticShapesOnly !== false) return null
      if (!accepts(p.devices[0], p.group, 1) || !accepts(p.devices[1], p.group, 1)) return null
    }
  }
  const tokens = phase === 'prefill' ? s.chunk : 1
  if (s.proxies === null) {
    const result = predictAssignments(assignments, tokens, s.cost)
    return result.ok ? result.ms : null
  }
  // the cost of a layer-periodic placement is affine in the layer count: exact from 2 and 3 layers
  const [two, three] = s.proxies
  const c2 = predictAssignments(assignments, tokens, two)
  const c3 = predictAssignments(assignGroups(placement, three.config), tokens, three)
  if (!c2.ok || !c3.ok) return null
  return c2.ms + (s.config.nLayers - 2) * (c3.ms - c2.ms)
}

/** The options tried for one matmul group of a tensor split. */
function matmulOptions(kind: MatmulGroup, phase: Phase, s: Search): MatmulChoice[] {
  const out: MatmulChoice[] = [{ on: 'a' }, { on: 'b' }, ...s.ratios.map((ratio): MatmulChoice => ({ by: 'rows', ratio }))]
  if (phase === 'prefill' && kind !== 'lm-head') {
    const lengths = new Set(SEQUENCE_FRACTIONS.map((f) => Math.round(f * s.chunk)).filter((n) => n >= 1 && n < s.chunk))
    for (const standardLength of lengths) out.push({ by: 'sequence', standardLength })
  }
  return out
}

function sameChoice(x: MatmulChoice, y: MatmulChoice): boolean {
  if ('on' in x || 'on' in y) return 'on' in x && 'on' in y && x.on === y.on
  if (x.by === 'rows') return y.by === 'rows' && x.ratio === y.ratio
  return y.by === 'sequence' && x.standardLength === y.standardLength
}

/** Best tensor split of devices a and b with the non-matmul groups on `rest`, by coordinate descent. */
function bestTensorSplit(a: string, b: string, rest: string, phase: Phase, s: Search): PhaseOutcome | null {
  const restChoice: MatmulChoice = { on: rest === a ? 'a' : 'b' }
  let shape: Extract<PhaseShape, { kind: 'tensor-split' }> = { kind: 'tensor-split', a, b, rest, choices: { qkv: restChoice, 'attn-out': restChoice, ffn: restChoice, 'lm-head': restChoice } }
  let ms = evaluate(shape, phase, s)
  if (ms === null) return null
  for (let pass = 0; pass < TENSOR_PASSES; pass++) {
    let improved = false
    for (const kind of MATMUL_GROUPS) {
      const current = shape.choices[kind]
      for (const choice of matmulOptions(kind, phase, s)) {
        if (sameChoice(choice, current)) continue
        const trial = { ...shape, choices: { ...shape.choices, [kind]: choice } }
        const t = evaluate(trial, phase, s)
        if (t !== null && t < ms) {
          ms = t
          shape = trial
          improved = true
        }
      }
    }
    if (!improved) break
  }
  return { shape, ms }
}

/** The best shape for one phase (singles first, so a tie keeps the simplest), plus every single's time. */
function solvePhase(phase: Phase, s: Search): { best: PhaseOutcome | null; singles: Map<string, number> } {
  let best: PhaseOutcome | null = null
  const consider = (o: PhaseOutcome | null): void => {
    if (o !== null && (best === null || o.ms < best.ms)) best = o
  }
  const singles = new Map<string, number>()
  for (const d of s.usable) {
    const ms = evaluate({ kind: 'single', device: d.id }, phase, s)
    if (ms !== null) singles.set(d.id, ms)
    consider(ms === null ? null : { shape: { kind: 'single', device: d.id }, ms })
  }
  for (const m of s.usable) {
    for (const r of s.usable) {
      if (m.id === r.id) continue
      const shape: PhaseShape = { kind: 'layer-split', matmul: m.id, rest: r.id }
      const ms = evaluate(shape, phase, s)
      consider(ms === null ? null : { shape, ms })
    }
  }
  for (const a of s.usable) {
    for (const b of s.usable) {
      if (a.id === b.id) continue
      for (const rest of [a.id, b.id]) {
        const o = bestTensorSplit(a.id, b.id, rest, phase, s)
        // ties keep the earlier, simpler shape (a split that moves nothing costs what the single does)
        consider(o)
      }
    }
  }
  return { best, singles }
}

/**
 * What the solution is compared with: for a single-device solution, the best other device running
 * everything; otherwise the best single-device placement (is the split worth it?). Null when none can.
 */
function alternativeOf(prefill: PhaseOutcome, decode: PhaseOutcome, singles: { prefill: Map<string, number>; decode: Map<string, number> }): Alternative | null {
  const p = prefill.shape
  const d = decode.shape
  const sameSingle = p.kind === 'single' && d.kind === 'single' && p.device === d.device ? p.device : null
  let best: Alternative | null = null
  let bestScore = Infinity
  for (const [device, prefillMs] of singles.prefill) {
    const decodeMs = singles.decode.get(device)
    if (decodeMs === undefined || device === sameSingle) continue
    const score = prefillMs / prefill.ms + decodeMs / decode.ms
    if (score < bestScore) {
      bestScore = score
      best = { device, prefillMs, decodeMs, everything: sameSingle === null }
    }
  }
  return best
}

/**
 * Chooses the placement with the least predicted time per phase on the ready, profiled devices and
 * explains it in one sentence. Throws when the profile is for another model shape or no device qualifies.
 */
export function solvePlacement(config: ModelConfig, devices: readonly DeviceInfo[], profile: Profile, options: SolverOptions = {}): Solution {
  const shape = modelShapeKey(config)
  if (profile.modelShape !== shape) throw new ProfileError('modelShape', `the profile is for "${profile.modelShape}", but the model is "${shape}"; profile it again`)
  const profiled = new Set(profile.devices.map((d) => d.device))
  const usable = devices.filter((d) => d.status === 'ready' && profiled.has(d.id))
  const weights = options.weights ?? FLOAT32_WEIGHTS
  const chunk = options.prefillChunkTokens ?? defaultPrefillChunkTokens(config)
  const proxy = (nLayers: number): CostContext => ({ config: { ...config, nLayers }, profile, devices })
  const proxies: Search['proxies'] = config.nLayers > 3 ? [proxy(2), proxy(3)] : null
  const wholeGroups = new Map(usable.map((d) => [d.id, new Set(OP_GROUP_NAMES.filter((k) => groupRefusal(d, k, config, weights) === null))]))
  const ratios = options.ratioGrid ?? DEFAULT_RATIO_GRID
  const s: Search = { config, cost: { config, profile, devices }, weights, chunk, ratios, usable, proxies, wholeGroups, accepted: new Map(), cuts: new Map() }
  const prefill = solvePhase('prefill', s)
  const decode = solvePhase('decode', s)
  if (prefill.best === null || decode.best === null) {
    const which = prefill.best === null ? 'prefill' : 'decode'
    throw new Error(`no placement for ${which}: the ready, profiled devices (${usable.map((d) => d.id).join(', ') || 'none'}) cannot run every op group between them`)
  }
  const draft: Placement = {
    version: PLACEMENT_VERSION,
    name: options.name ?? 'Auto',
    prefillChunkTokens: chunk,
    phases: { prefill: phaseOf(prefill.best.shape), decode: phaseOf(decode.best.shape) }
  }
  // the solver only builds placements the validator accepts; check it rather than trust it
  const placement = parsePlacement(draft, config, devices, weights)
  // the search extrapolated from 2 and 3 layers; report the full model's prediction
  const predictedMs = predictPlacement(placement, s.cost)
  const chosenPrefill = { shape: prefill.best.shape, ms: predictedMs.prefill }
  const chosenDecode = { shape: decode.best.shape, ms: predictedMs.decode }
  const alternative = alternativeOf(chosenPrefill, chosenDecode, { prefill: prefill.singles, decode: decode.singles })
  return { placement, predictedMs, explanation: explainSolution(chosenPrefill, chosenDecode, chunk, alternative, devices) }
}
