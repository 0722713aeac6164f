/**
 * @file Predicted time of one run of a phase (a prefill chunk of `prefillChunkTokens` tokens, or one decode
 * step) under a placement, from a Profile. The phase is walked as the segments `placementToSegments`
 * produces (maximal same-device runs and partitions), without building their specs:
 *
 *   run segment on d:  hand-off in + runOverhead(d) + Σ over its groups T_d(group, S)
 *   partition (a, b):  max(in_a + overhead_a + T_a(p), in_b + overhead_b + T_b(1 − p)) + T_sync(b → a)
 *
 * which is HeteroInfer's max(T_a(p), T_b(1−p)) + T_sync; for rows T_d(x) is piecewise linear in the share
 * x through (0, 0), (s, T_d(part s)), (1, T_d(all)) where the profile measured a part of share s on d, else
 * x · T_d(all) (profile.ts partMs); T_a(tokens) from the profile for sequence. When the two devices share compute (a
 * second CPU worker, a software GPU on the CPU) the parts cannot run at once, so they add instead of max.
 * Hand-off in = for each other-device segment whose outputs this one reads: fixedMs + MiB · msPerMiB of
 * the link. Values the runtime supplies (hidden, positions, the KV cache) and model results (logits, new
 * K/V) cost nothing here: every placement pays them alike. Overlap between segments is ignored: the
 * scheduler runs a phase's segments in order.
 */
import type { DeviceInfo } from '../devices'
import { describeValue, type OpGroup } from '../graph'
import type { ModelConfig } from '../model'
import { assignGroups, type GroupAssignment, type Partition, type Phase, type Placement } from './placement'
import { groupMs, linkCost, partMs, type Profile } from './profile'
import { rowCuts, rowShareOf } from './rows'

/** What the cost model needs besides the placement. */
export interface CostContext {
  readonly config: ModelConfig
  readonly profile: Profile
  readonly devices: readonly DeviceInfo[]
}

/** A prediction, or why none could be made (a device or group missing from the profile, a bad cut). */
export type Prediction = { readonly ok: true; readonly ms: number } | { readonly ok: false; readonly missing: string }

const MIB = 2 ** 20

/** Tokens in one run of the phase: the prefill chunk, or 1 for a decode step. */
export function phaseTokens(placement: Placement, phase: Phase): number {
  return phase === 'prefill' ? placement.prefillChunkTokens : 1
}

/** Per config: value name -> bytes per token (or fixed bytes when the value has no 'seq' dimension). */
const BYTES_MEMO = new WeakMap<ModelConfig, Map<string, { bytes: number; perToken: boolean }>>()

/** Bytes of a logical value for a run of `tokens` tokens (its 'seq' dimension); memoized, the solver asks often. */
function valueBytes(config: ModelConfig, name: string, tokens: number): number {
  let memo = BYTES_MEMO.get(config)
  if (memo === undefined) BYTES_MEMO.set(config, (memo = new Map()))
  let entry = memo.get(name)
  if (entry === undefined) {
    const { elem, dims } = describeValue(config, name)
    const elems = dims.reduce<number>((n, d) => n * (typeof d === 'number' ? d : 1), 1)
    entry = { bytes: elems * (elem === 'int64' ? 8 : 4), perToken: dims.includes('seq') }
    memo.set(name, entry)
  }
  return entry.perToken ? entry.bytes * tokens : entry.bytes
}

/** True when the two devices compete for the same compute. */
function shareCompute(ctx: CostContext, a: string, b: string): boolean {
  const da = ctx.devices.find((d) => d.id === a)
  const db = ctx.devices.find((d) => d.id === b)
  return (da?.sharesComputeWith.includes(b) ?? false) || (db?.sharesComputeWith.includes(a) ?? false)
}

/** First group of a run -> run length -> its inputs (groups are the shared objects of opGroupsOf). */
const INPUTS_MEMO = new WeakMap<OpGroup, Map<number, string[]>>()

/** Values a run of consecutive groups reads that none of them produces (memoized per run). */
function unitInputs(groups: readonly OpGroup[]): string[] {
  let byLength = INPUTS_MEMO.get(groups[0])
  if (byLength === undefined) INPUTS_MEMO.set(groups[0], (byLength = new Map()))
  let inputs = byLength.get(groups.length)
  if (inputs === undefined) {
    const produced = new Set(groups.flatMap((g) => g.outputs))
    inputs = [...new Set(groups.flatMap((g) => g.inputs))].filter((v) => !produced.has(v))
    byLength.set(groups.length, inputs)
  }
  return inputs
}

/** Per config: `group|ratio` -> row cuts (the solver prices the same cuts thousands of times). */
const CUTS_MEMO = new WeakMap<ModelConfig, Map<string, ReturnType<typeof rowCuts>>>()

function cutsOf(group: Partition['group'], ratio: number, config: ModelConfig): ReturnType<typeof rowCuts> {
  let memo = CUTS_MEMO.get(config)
  if (memo === undefined) CUTS_MEMO.set(config, (memo = new Map()))
  const key = `${group}|${ratio}`
  let cuts = memo.get(key)
  if (cuts === undefined) memo.set(key, (cuts = rowCuts(group, ratio, config)))
  return cuts
}

/** A run of same-device groups or one partitioned group. */
type Unit = { readonly device: string; readonly groups: OpGroup[]; readonly partition: null } | { readonly device: string; readonly groups: [OpGroup]; readonly partition: Partition }

function units(assignments: readonly GroupAssignment[]): Unit[] {
  const out: Unit[] = []
  for (const a of assignments) {
    const last = out[out.length - 1]
    if (a.partition !== null) out.push({ device: a.device, groups: [a.group], partition: a.partition })
    else if (last !== undefined && last.partition === null && last.device === a.device) last.groups.push(a.group)
    else out.push({ device: a.device, groups: [a.group], partition: null })
  }
  return out
}

/** Predicts one run of a phase from its group assignments (see the file comment for the model). */
export function predictAssignments(assignments: readonly GroupAssignment[], tokens: number, ctx: CostContext): Prediction {
  const { config, profile } = ctx
  // value -> index of the unit that produced it; unit index -> its home device
  const producer = new Map<string, number>()
  const homes: string[] = []
  const overheads = new Map(profile.devices.map((d) => [d.device, d.runOverheadMs]))
  let missing: string | null = null
  const time = (device: string, group: OpGroup, n: number): number => {
    const ms = groupMs(profile, device, group.kind, n)
    if (ms === null) missing ??= `the profile has no timing of ${group.kind} on ${JSON.stringify(device)}`
    return ms ?? 0
  }
  /** A row-partition part holding `share` of the group's rows on `device`. */
  const partTime = (device: string, group: Partition['group'], share: number, n: number): number => {
    const ms = partMs(profile, device, group, share, n)
    if (ms === null) missing ??= `the profile has no timing of ${group} on ${JSON.stringify(device)}`
    return ms ?? 0
  }
  const overhead = (device: string): number => {
    const ms = overheads.get(device)
    if (ms === undefined) missing ??= `the profile has no entry for device ${JSON.stringify(device)}`
    return ms ?? 0
  }
  /** Hand-off cost of `inputs` into a segment on `device` that reads `n` tokens of them. */
  const handoff = (inputs: readonly string[], device: string, n: number): number => {
    let bySource: Map<number, { device: string; bytes: number }> | null = null
    for (const v of inputs) {
      const unit = producer.get(v)
      if (unit === undefined || homes[unit] === device) continue
      bySource ??= new Map()
      const entry = bySource.get(unit) ?? { device: homes[unit], bytes: 0 }
      entry.bytes += valueBytes(config, v, n)
      bySource.set(unit, entry)
    }
    if (bySource === null) return 0
    let ms = 0
    for (const { device: from, bytes } of bySource.values()) {
      const link = linkCost(profile, from, device)
      ms += link.fixedMs + (bytes / MIB) * link.msPerMiB
    }
    return ms
  }

  let total = 0
  units(assignments).forEach((unit, index) => {
    homes.push(unit.device)
    // a group never reads its own outputs, so a one-group unit needs no set arithmetic
    const single = unit.groups.length === 1 ? unit.groups[0] : null
    const produced: Iterable<string> = single !== null ? single.outputs : new Set(unit.groups.flatMap((g) => g.outputs))
    const inputs = single !== null ? single.inputs : unitInputs(unit.groups)
    if (unit.partition === null) {
      total += handoff(inputs, unit.device, tokens) + overhead(unit.device)
      for (const g of unit.groups) total += time(unit.device, g, tokens)
    } else {
      const p = unit.partition
      const group = unit.groups[0]
      const [a, b] = p.devices
      let timeA: number
      let timeB: number
      let syncBytes: number
      if (p.by === 'rows') {
        const cuts = cutsOf(p.group, p.ratio, config)
        if (typeof cuts === 'string') {
          missing ??= cuts
          return
        }
        const share = rowShareOf(cuts)
        timeA = handoff(inputs, a, tokens) + overhead(a) + partTime(a, p.group, share, tokens)
        timeB = handoff(inputs, b, tokens) + overhead(b) + partTime(b, p.group, 1 - share, tokens)
        // b hands its slice of each output to a (ffn: a whole partial sum)
        syncBytes = group.outputs.reduce((s, v) => s + valueBytes(config, v, tokens), 0) * (p.group === 'ffn' ? 1 : 1 - share)
      } else {
        const tokensA = Math.min(tokens, p.standardLength)
        const tokensB = tokens - tokensA
        timeA = handoff(inputs, a, tokensA) + overhead(a) + time(a, group, tokensA)
        timeB = tokensB === 0 ? 0 : handoff(inputs, b, tokensB) + overhead(b) + time(b, group, tokensB)
        syncBytes = group.outputs.reduce((s, v) => s + valueBytes(config, v, tokensB), 0)
      }
      const parallel = shareCompute(ctx, a, b) ? timeA + timeB : Math.max(timeA, timeB)
      const link = linkCost(profile, b, a)
      total += parallel + (timeB === 0 ? 0 : link.fixedMs + (syncBytes / MIB) * link.msPerMiB)
    }
    for (const v of produced) producer.set(v, index)
  })
  return missing !== null ? { ok: false, missing } : { ok: true, ms: total }
}

/** Predicted ms of one run of `phase` (a prefill chunk or a decode step); throws when the profile lacks something. */
export function predictPhaseMs(placement: Placement, phase: Phase, ctx: CostContext): number {
  const result = predictAssignments(assignGroups(placement.phases[phase], ctx.config), phaseTokens(placement, phase), ctx)
  if (!result.ok) throw new Error(`cannot predict ${phase} of placement ${JSON.stringify(placement.name)}: ${result.missing}`)
  return result.ms
}

/** Predicted ms per prefill chunk and per decode step. */
export function predictPlacement(placement: Placement, ctx: CostContext): { prefill: number; decode: number } {
  return { prefill: predictPhaseMs(placement, 'prefill', ctx), decode: predictPhaseMs(placement, 'decode', ctx) }
}
