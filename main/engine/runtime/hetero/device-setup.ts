/**
 * @file From a validated Placement to what the heterogeneous runtime sets up, without running anything:
 * the graphs to compile (one per distinct device × segment × row part; prefill and decode share equal
 * ones), the programs each device worker registers, the ordered steps of each phase (graph runs,
 * partition parts, 'sum' joins, KV appends), the arena slots, and which device holds which layer's KV
 * cache (every device that runs that layer's attention in some phase; a holder that does not run it in
 * the current phase gets the new rows by an append step right after the step that does).
 */
import { describeValue, kvOutputValues, modelOpGroups, segmentSpec, shadowIo, VALUE, type GroupPart, type OpGroup, type SegmentSpec, type ShadowSpec, type ShadowStage } from '../../graph'
import type { ModelConfig } from '../../model'
import { PHASES, placementToSegments, shadowDeviceOf, type Phase, type Placement, type PlanSegment } from '../../plan'
import type { DeviceProgram, OutputRoute } from './device-protocol'
import { shareSlots } from './slot-sharing'
import type { SlotShape } from './value-arena'

/** One graph to compile and open on one device. */
export interface SetupGraph {
  /** short id, unique in the setup (the device worker's session key) */
  readonly key: string
  readonly device: string
  readonly label: string
  readonly spec: SegmentSpec
  /** the row part this graph computes, or null for a whole segment */
  readonly part: GroupPart | null
  /** the shadow graph this is (graph/shadow.ts), or null for a segment of the model */
  readonly shadow: ShadowSpec | null
  /** tokens per run fixed in the graph (a static-shape device's), null for a dynamic graph */
  readonly staticRows: number | null
}

/** A step of a phase: one program on one device, with the arena values it reads and writes. */
export interface PhaseStep {
  readonly device: string
  /** program id (unique across devices) */
  readonly program: number
  readonly label: string
  readonly reads: readonly string[]
  readonly writes: readonly string[]
  /** estimated cost per token (op groups, scaled by a part's share) for the scheduler's priority rule */
  readonly costPerToken: number
  /** steps of one partition share an id; their writes to the same value are disjoint ranges */
  readonly partition: number | null
  /** a sequence part's tokens, to skip it when the chunk leaves it none; null otherwise */
  readonly tokens: { readonly start: number; readonly count: number | null } | null
}

/** Everything the runtime needs to set up a placement. */
export interface DeviceSetup {
  /** devices used in either phase, in first-use order (also their usage-board slots) */
  readonly devices: readonly string[]
  readonly sessions: readonly SetupGraph[]
  readonly programs: ReadonlyArray<{ readonly id: number; readonly device: string; readonly program: DeviceProgram }>
  readonly phases: Readonly<Record<Phase, readonly PhaseStep[]>>
  /** arena slots, values that are never live at once sharing one (see slot-sharing.ts) */
  readonly slots: readonly SlotShape[]
  /** device -> layers whose KV cache it holds */
  readonly kvLayers: ReadonlyMap<string, readonly number[]>
  /** the arena's rows per chunk (the prefill chunk) */
  readonly chunkRows: number
}

/**
 * Shadow outlier execution for a model running W8A8 (llm.npu §3.3): in the layers listed, each matmul group
 * (qkv, attn-out, ffn) runs alone as its own segment and a shadow graph on the phase's shadow device adds what
 * int8 clipping removed (see graph/shadow.ts for where each correction goes).
 */
export interface ShadowLayers {
  readonly layers: ReadonlySet<number>
  /** hot input channels per matmul weight (tensor name), from the calibration */
  readonly hot: Readonly<Record<string, readonly number[]>>
}

/** ShadowLayers, and the devices whose matmuls run W8A8 (integer NPUs): groups elsewhere compute in float, unshadowed. */
export interface ShadowSetup extends ShadowLayers {
  readonly w8a8Devices: ReadonlySet<string>
}

/** The shadow stages of a group, before and after its main run. */
const SHADOW_STAGES_OF: Partial<Record<OpGroup['kind'], { readonly before: ShadowStage | null; readonly after: ShadowStage | null }>> = {
  qkv: { before: null, after: 'qkv' },
  'attn-out': { before: null, after: 'attn-out' },
  ffn: { before: 'ffn-up', after: 'ffn-down' }
}

/** True when `group`, run on `device`, gets shadow segments under `shadow`: a W8A8 group of a shadow layer. */
function shadowed(group: OpGroup, device: string, shadow: ShadowSetup | null): boolean {
  return shadow !== null && shadow.w8a8Devices.has(device) && group.layer !== null && shadow.layers.has(group.layer) && SHADOW_STAGES_OF[group.kind] !== undefined
}

/**
 * `segments` with every shadowed group of a run cut out into a run of its own; a shadowed ffn also reads its
 * gate/up corrections and writes its SwiGLU output for the down projection's shadow.
 */
function isolateShadowed(segments: readonly PlanSegment[], config: ModelConfig, shadow: ShadowSetup | null): PlanSegment[] {
  if (shadow === null || shadow.layers.size === 0 || shadow.w8a8Devices.size === 0) return [...segments]
  const all = modelOpGroups(config)
  const same = (g: OpGroup): OpGroup => {
    const found = all.find((a) => a.layer === g.layer && a.kind === g.kind)
    if (found === undefined) throw new Error(`unreachable: no op group ${g.layer} ${g.kind}`)
    return found
  }
  const out: PlanSegment[] = []
  for (const seg of segments) {
    if (seg.kind !== 'run') {
      if (seg.parts.some((p) => seg.spec.groups.some((g) => shadowed(g, p.device, shadow)))) throw new Error(`layer ${seg.layer ?? 'final'} ${seg.group} is partitioned; shadow outlier execution needs it whole on one device`)
      out.push(seg)
      continue
    }
    let run: OpGroup[] = []
    const flush = (): void => {
      if (run.length > 0) out.push({ kind: 'run', device: seg.device, spec: segmentSpec(config, run, all) })
      run = []
    }
    for (const g of seg.spec.groups.map(same)) {
      if (!shadowed(g, seg.device, shadow)) {
        run.push(g)
        continue
      }
      flush()
      const spec = segmentSpec(config, [g], all)
      const l = g.layer ?? -1
      const extra = g.kind === 'ffn' ? { inputs: [...spec.inputs, VALUE.ffnCorr(l)], outputs: [...spec.outputs, VALUE.ffnHidden(l)] } : {}
      out.push({ kind: 'run', device: seg.device, spec: { ...spec, ...extra } })
    }
    flush()
  }
  return out
}

/** The arena value a 'sum' join's second part writes its partial sum to. */
export function partialValue(value: string): string {
  return `${value}${PARTIAL_SUFFIX}`
}

const PARTIAL_SUFFIX = '~partial'

function groupLabel(g: OpGroup): string {
  return `${g.layer === null ? 'final' : `layer ${g.layer}`} ${g.kind}`
}

function specLabel(spec: SegmentSpec): string {
  const first = spec.groups[0]
  const last = spec.groups[spec.groups.length - 1]
  return first === last ? groupLabel(first) : `${groupLabel(first)} … ${groupLabel(last)}`
}

/** Graph inputs the runtime supplies itself rather than from the arena. */
function fromArena(name: string): boolean {
  return name !== VALUE.positions && !/^past_[kv]_\d+$/.test(name)
}

/**
 * What the device workers set up for `placement` (already validated) on `config`. Devices in `staticShapes`
 * take only static-shape graphs: theirs are compiled for a fixed token count — the prefill chunk (or a
 * sequence part's share of it) in prefill, one token in decode — and the worker pads shorter runs.
 */
export function deviceSetupOf(placement: Placement, config: ModelConfig, staticShapes: ReadonlySet<string> = new Set(), shadow: ShadowSetup | null = null): DeviceSetup {
  const chunkRows = Math.max(1, placement.prefillChunkTokens)
  const devices: string[] = []
  const use = (d: string): void => {
    if (!devices.includes(d)) devices.push(d)
  }
  const sessions: SetupGraph[] = []
  const sessionKeys = new Map<string, SetupGraph>()
  const sessionFor = (device: string, spec: SegmentSpec, part: GroupPart | null, label: string, rows: number, shadowSpec: ShadowSpec | null = null): SetupGraph => {
    const staticRows = staticShapes.has(device) ? rows : null
    const id = `${device}|${spec.groups.map((g) => `${g.layer ?? 'f'}:${g.kind}`).join(',')}|${spec.inputs.join(',')}|${part === null ? '' : JSON.stringify(part)}|${shadowSpec?.stage ?? ''}|${staticRows ?? ''}`
    let s = sessionKeys.get(id)
    if (s === undefined) {
      s = { key: `g${sessions.length}`, device, label, spec, part, shadow: shadowSpec, staticRows }
      sessions.push(s)
      sessionKeys.set(id, s)
    }
    return s
  }
  const programs: Array<{ id: number; device: string; program: DeviceProgram }> = []
  const addProgram = (device: string, program: DeviceProgram): number => {
    use(device)
    const id = programs.length
    programs.push({ id, device, program })
    return id
  }
  const slotNames = new Set<string>([VALUE.hidden, VALUE.logits])

  // pass 1: each phase's steps, and where each layer's attention runs
  const attention: Record<Phase, Map<number, { device: string; after: number }>> = { prefill: new Map(), decode: new Map() }
  const bodies: Record<Phase, PhaseStep[]> = { prefill: [], decode: [] }
  let partitionId = 0
  for (const phase of PHASES) {
    const steps = bodies[phase]
    const phaseRows = phase === 'prefill' ? chunkRows : 1
    const segments: PlanSegment[] = isolateShadowed(placementToSegments(placement, phase, config), config, shadow)
    const shadowDevice = shadowDeviceOf(placement.phases[phase])
    /** A shadow graph's step on the phase's shadow device; a summed correction goes to a partial, then a join. */
    const addShadow = (group: OpGroup, stage: ShadowStage): void => {
      if (shadow === null || group.layer === null) return
      const io = shadowIo(group.layer, stage)
      const label = `${phase} layer ${group.layer} ${stage} shadow on ${shadowDevice}`
      const spec: SegmentSpec = { groups: [group], inputs: [io.input], outputs: io.outputs }
      const shadowSpec: ShadowSpec = { layer: group.layer, stage, hot: shadow.hot }
      const session = sessionFor(shadowDevice, spec, null, `layer ${group.layer} ${stage} shadow`, phaseRows, shadowSpec)
      const writes = io.outputs.map((o) => (io.summed ? partialValue(o) : o))
      const outputs: Record<string, OutputRoute> = Object.fromEntries(io.outputs.map((o, i) => [o, { value: writes[i], start: 0 }]))
      const program = addProgram(shadowDevice, { kind: 'graph', label, session: session.key, tokenStart: 0, tokenCount: null, outputs, kv: [], local: [] })
      steps.push({ device: shadowDevice, program, label, reads: [io.input], writes, costPerToken: 0.25, partition: null, tokens: null })
      if (!io.summed) return
      for (const value of io.outputs) {
        const joinLabel = `${phase} layer ${group.layer} ${value} + shadow on ${shadowDevice}`
        const join = addProgram(shadowDevice, { kind: 'sum', label: joinLabel, target: value, partial: partialValue(value) })
        steps.push({ device: shadowDevice, program: join, label: joinLabel, reads: [value, partialValue(value)], writes: [value], costPerToken: 0.01, partition: null, tokens: null })
      }
    }
    for (const seg of segments) {
      const reads = seg.spec.inputs.filter(fromArena)
      if (seg.kind === 'run') {
        const stages = seg.spec.groups.length === 1 && shadowed(seg.spec.groups[0], seg.device, shadow) ? SHADOW_STAGES_OF[seg.spec.groups[0].kind] : undefined
        if (stages?.before) addShadow(seg.spec.groups[0], stages.before)
        const label = `${phase} ${specLabel(seg.spec)} on ${seg.device}`
        const session = sessionFor(seg.device, seg.spec, null, specLabel(seg.spec), phaseRows)
        const kv = kvOutputValues(seg.spec)
        const outputs: Record<string, OutputRoute> = {}
        for (const o of seg.spec.outputs) if (!kv.includes(o)) outputs[o] = { value: o, start: 0 }
        const program = addProgram(seg.device, { kind: 'graph', label, session: session.key, tokenStart: 0, tokenCount: null, outputs, kv: kv.map((value) => ({ value, start: 0 })), local: [] })
        steps.push({ device: seg.device, program, label, reads, writes: seg.spec.outputs, costPerToken: seg.spec.groups.length, partition: null, tokens: null })
        for (const g of seg.spec.groups) if (g.kind === 'attention' && g.layer !== null) attention[phase].set(g.layer, { device: seg.device, after: steps.length - 1 })
        if (stages?.after) addShadow(seg.spec.groups[0], stages.after)
        continue
      }
      const pid = partitionId++
      const name = `${phase} ${groupLabel(seg.spec.groups[0])} (${seg.by} part`
      if (seg.by === 'sequence') {
        seg.parts.forEach((part, i) => {
          if (part.slice.by !== 'sequence') throw new Error('a sequence partition has a non-sequence part')
          const label = `${name} ${i === 0 ? 'a' : 'b'}) on ${part.device}`
          const session = sessionFor(part.device, seg.spec, null, specLabel(seg.spec), part.slice.tokenCount ?? phaseRows)
          const kv = kvOutputValues(seg.spec)
          const outputs: Record<string, OutputRoute> = {}
          for (const o of seg.spec.outputs) if (!kv.includes(o)) outputs[o] = { value: o, start: 0 }
          const tokens = { start: part.slice.tokenStart, count: part.slice.tokenCount }
          const program = addProgram(part.device, { kind: 'graph', label, session: session.key, tokenStart: tokens.start, tokenCount: tokens.count, outputs, kv: kv.map((value) => ({ value, start: 0 })), local: [] })
          steps.push({ device: part.device, program, label, reads, writes: seg.spec.outputs, costPerToken: 0.5, partition: pid, tokens })
        })
        continue
      }
      const sum = seg.joins.find((j) => j.op === 'sum')
      seg.parts.forEach((part, i) => {
        if (part.slice.by !== 'rows') throw new Error('a row partition has a non-row part')
        const slice = part.slice
        const label = `${name} ${i === 0 ? 'a' : 'b'}) on ${part.device}`
        const session = sessionFor(part.device, seg.spec, slice, `${specLabel(seg.spec)} rows ${i === 0 ? 'a' : 'b'}`, phaseRows)
        const outputs: Record<string, OutputRoute> = {}
        const writes: string[] = []
        for (const o of slice.outputs) {
          // the second part of a sum join writes a partial sum of the whole value, added by the join step
          const value = sum !== undefined && i === 1 && o.value === sum.value ? partialValue(o.value) : o.value
          outputs[o.value] = { value, start: value === o.value ? o.start : 0 }
          writes.push(value)
        }
        const program = addProgram(part.device, { kind: 'graph', label, session: session.key, tokenStart: 0, tokenCount: null, outputs, kv: [], local: [] })
        steps.push({ device: part.device, program, label, reads, writes, costPerToken: 0.5, partition: pid, tokens: null })
      })
      if (sum !== undefined) {
        const device = seg.parts[0].device
        const label = `${name}s joined) on ${device}`
        const program = addProgram(device, { kind: 'sum', label, target: sum.value, partial: partialValue(sum.value) })
        steps.push({ device, program, label, reads: [sum.value, partialValue(sum.value)], writes: [sum.value], costPerToken: 0.01, partition: null, tokens: null })
      }
    }
  }

  // pass 2: KV holders, and append steps for holders that do not run the layer in a phase
  const holders = new Map<number, string[]>()
  for (const phase of PHASES) {
    for (const [layer, a] of attention[phase]) {
      const list = holders.get(layer) ?? []
      if (!list.includes(a.device)) list.push(a.device)
      holders.set(layer, list)
    }
  }
  const kvLayers = new Map<string, number[]>()
  for (const [layer, list] of [...holders].sort((a, b) => a[0] - b[0])) for (const d of list) kvLayers.set(d, [...(kvLayers.get(d) ?? []), layer])
  const withAppends = (phase: Phase): PhaseStep[] => {
    const out: PhaseStep[] = []
    bodies[phase].forEach((step, i) => {
      out.push(step)
      for (const [layer, a] of attention[phase]) {
        if (a.after !== i) continue
        for (const device of holders.get(layer) ?? []) {
          if (device === a.device) continue
          const label = `${phase} layer ${layer} KV rows appended on ${device}`
          const program = addProgram(device, { kind: 'append', label, layer })
          out.push({ device, program, label, reads: [VALUE.newK(layer), VALUE.newV(layer)], writes: [], costPerToken: 0.01, partition: null, tokens: null })
        }
      }
    })
    return out
  }
  const phases: Record<Phase, PhaseStep[]> = { prefill: withAppends('prefill'), decode: withAppends('decode') }

  // K/V rows no other step of the phase reads only feed the running worker's own cache: no arena slot
  for (const phase of PHASES) {
    const read = new Set(phases[phase].flatMap((s) => s.reads))
    for (const step of phases[phase]) {
      const entry = programs[step.program]
      let local: string[] = []
      if (entry.program.kind === 'graph' && entry.program.kv.length > 0) {
        local = entry.program.kv.map((r) => r.value).filter((v) => !read.has(v))
        programs[step.program] = { ...entry, program: { ...entry.program, local } }
      }
      for (const v of [...step.reads, ...step.writes]) if (!local.includes(v)) slotNames.add(v)
    }
  }

  const shapes: SlotShape[] = []
  for (const name of slotNames) {
    const base = name.endsWith(PARTIAL_SUFFIX) ? name.slice(0, -PARTIAL_SUFFIX.length) : name
    const { dims } = describeValue(config, base)
    const width = dims[dims.length - 1]
    if (typeof width !== 'number') throw new Error(`value ${name} has no fixed width`)
    shapes.push({ name, width, rows: dims.includes('seq') ? chunkRows : 1 })
  }
  // the coordinator reads the logits after the whole DAG: they keep their own slot
  const slots = shareSlots([phases.prefill, phases.decode], shapes, new Set([VALUE.logits]))
  return { devices, sessions, programs, phases, slots, kvLayers, chunkRows }
}
