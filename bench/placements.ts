/**
 * @file The benchmark's "Placements" section: tokens per second of every preset this machine can run plus
 * Auto, on one small model. Steps: probe the devices, measure them for Auto (`profileDevices`, the same
 * profile also predicts every preset's time), measure the hand-off latency (`measureHandoff`), build the
 * placements, open each in a process of its own (placement-child.ts), warm each up (WebGPU compiles its
 * shaders on the first run of a shape), then `reps` rounds of a 128-token prefill and 64 greedy decode
 * steps, rotating the order of the placements every round so load from elsewhere hits them alike. A
 * rep's prefill figure is the median of several prefills when one is short (a CPU prefill here is ~10 ms).
 * Before each timed call, every placement process must have gone idle (see waitQuiet).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { discoverDevices, type DeviceInfo } from '../main/engine/devices'
import { loadModel } from '../main/engine/model'
import { buildPreset, planAuto, predictPlacement, PRESET_IDS, PRESET_LABELS, weightInfoOf, type Placement, type PresetId } from '../main/engine/plan'
import { profileDevices } from '../main/engine/runtime'
import { cpuSnapshot, otherCpuPct, processTicks } from './cpu-load'
import { promptTokens, summarizeGguf } from './gguf-summary'
import { measureHandoff, type HandoffMeasurement } from './handoff'
import { PlacementChild, type PlacementCallResult } from './placement-handle'
import type { DeviceBusy } from './placement-protocol'

/** Prompt tokens of the timed prefill; also the prefill chunk, so one prefill is one chunk (what Auto predicts). */
export const PLACEMENT_PROMPT_TOKENS = 128
/** Greedy decode steps after the prefill. */
export const PLACEMENT_DECODE_STEPS = 64
/** KV positions each child holds (prompt + decode, rounded up). */
const CONTEXT_SIZE = 256
/** Seed of the prompt token ids (fixed normal tokens of the model's vocabulary). */
const PROMPT_SEED = 4321
/** Pause before each timed call, so the previous child's worker threads have parked. */
const SETTLE_MS = 50
/** Poll period while waiting for the children to go idle (ms), and the longest wait. */
const QUIET_POLL_MS = 50
const MAX_QUIET_WAIT_MS = 3000
/** Consecutive polls without a CPU tick from any child that count as idle. */
const QUIET_POLLS = 2
/** Per rep, prefills repeat until this much was timed (at most MAX_PREFILLS_PER_REP): a 10 ms CPU prefill alone is all noise. */
const PREFILL_BUDGET_MS = 200
/** Most prefills per rep (the rep's figure is their median). */
const MAX_PREFILLS_PER_REP = 10
/** Separate hand-off measurements (each a fresh device worker and echo worker), for the spread. */
const HANDOFF_ROUNDS = 5
/** Round trips per hand-off measurement. */
const HANDOFF_HOPS = 2000

/** Settings of the section. */
export interface PlacementsOptions {
  readonly modelPath: string
  readonly modelLabel: string
  readonly reps: number
  readonly graphCacheDir: string
  readonly log: (line: string) => void
}

/** A device as the results list it (the probed facts that matter for reading the numbers). */
export interface DeviceRecord {
  readonly id: string
  readonly name: string
  readonly kind: string
  readonly ep: string
  readonly status: string
  readonly software: boolean
  readonly sharesComputeWith: readonly string[]
  readonly reason: string | null
}

/** One timed call with the machine's other load during it. */
export interface TimedCall {
  readonly ms: number
  readonly busy: readonly DeviceBusy[]
  /** percent of all cores used by other processes during the call; null without /proc */
  readonly otherCpuPct: number | null
  /** calls this figure is the median of (prefill: several per rep, see PREFILL_BUDGET_MS) */
  readonly count: number
}

/** One preset (or Auto) on this machine. */
export interface PlacementRun {
  readonly id: PresetId
  readonly label: string
  /** the preset's note (its fallback), or Auto's explanation */
  readonly note: string | null
  /** null when the preset could not be built or opened here (`skipped` says why) */
  readonly placement: Placement | null
  readonly skipped: string | null
  /** ms per prefill chunk and per decode step the profile predicts; null where it cannot */
  readonly predictedMs: { readonly prefill: number; readonly decode: number } | null
  /** presets whose placement is identical to this one */
  readonly sameAs: readonly PresetId[]
  readonly deviceIds: readonly string[]
  readonly loadMs: number | null
  readonly setup: string | null
  /** per measured rep: the prefill of PLACEMENT_PROMPT_TOKENS and the PLACEMENT_DECODE_STEPS decode steps */
  readonly prefill: readonly TimedCall[]
  readonly decode: readonly TimedCall[]
  /** greedy ids of the first measured rep: the prefill's token, then the decoded ones */
  readonly tokens: readonly number[]
}

/** The section's raw record (report: placements-report.ts). */
export interface PlacementsRecord {
  readonly model: { readonly label: string; readonly path: string }
  readonly promptTokens: number
  readonly decodeSteps: number
  readonly prefillChunkTokens: number
  readonly reps: number
  readonly devices: readonly DeviceRecord[]
  readonly discoverMs: number
  readonly profileMs: number
  readonly runs: readonly PlacementRun[]
  readonly handoff: readonly HandoffMeasurement[]
  readonly wallMs: number
}

function deviceRecord(d: DeviceInfo): DeviceRecord {
  return { id: d.id, name: d.name, kind: d.kind, ep: d.ep, status: d.status, software: d.software, sharesComputeWith: d.sharesComputeWith, reason: d.reason }
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Same groups on the same devices (names aside). */
function samePlacement(a: Placement, b: Placement): boolean {
  return JSON.stringify({ ...a, name: '' }) === JSON.stringify({ ...b, name: '' })
}

interface Candidate {
  readonly id: PresetId
  readonly note: string | null
  readonly placement: Placement | null
  readonly skipped: string | null
  readonly predictedMs: { readonly prefill: number; readonly decode: number } | null
}

/**
 * Waits until none of `children` uses the CPU (QUIET_POLLS polls in a row without a tick), at most
 * MAX_QUIET_WAIT_MS; returns the ms waited. A heterogeneous runner's threads keep a core busy for a few
 * hundred ms after its last forward, which would otherwise land on whichever placement runs next.
 */
async function waitQuiet(children: readonly PlacementChild[]): Promise<number> {
  const pids = children.map((c) => c.pid).filter((p): p is number => p !== undefined)
  const total = (): number | null => {
    try {
      return pids.reduce((sum, pid) => sum + processTicks(pid), 0)
    } catch {
      return null // no /proc (or a child just exited): nothing to wait for
    }
  }
  const t0 = performance.now()
  let last = total()
  let quiet = 0
  while (last !== null && quiet < QUIET_POLLS && performance.now() - t0 < MAX_QUIET_WAIT_MS) {
    await sleep(QUIET_POLL_MS)
    const now = total()
    quiet = now === last ? quiet + 1 : 0
    last = now
  }
  return performance.now() - t0
}

async function timed(child: PlacementChild, body: Parameters<PlacementChild['run']>[0], all: readonly PlacementChild[]): Promise<PlacementCallResult & { otherCpuPct: number | null }> {
  await waitQuiet(all)
  await sleep(SETTLE_MS)
  const before = cpuSnapshot(child.pid)
  const r = await child.run(body)
  return { ...r, otherCpuPct: otherCpuPct(before, cpuSnapshot(child.pid)) }
}

/** One rep's prefill: the median of repeated prefills from an empty cache (see PREFILL_BUDGET_MS), and its greedy token. */
async function prefillRep(child: PlacementChild, prompt: readonly number[], all: readonly PlacementChild[]): Promise<{ call: TimedCall; token: number }> {
  const runs: (PlacementCallResult & { otherCpuPct: number | null })[] = []
  let spentMs = 0
  while (runs.length === 0 || (spentMs < PREFILL_BUDGET_MS && runs.length < MAX_PREFILLS_PER_REP)) {
    const r = await timed(child, { op: 'prefill', tokens: prompt }, all)
    runs.push(r)
    spentMs += r.ms
  }
  const mid = [...runs].sort((a, b) => a.ms - b.ms)[Math.floor((runs.length - 1) / 2)]
  return { call: { ms: mid.ms, busy: mid.busy, otherCpuPct: mid.otherCpuPct, count: runs.length }, token: runs[runs.length - 1].tokens[0] }
}

/** Runs the whole section (minutes on a 2-core machine with lavapipe). */
export async function benchmarkPlacements(options: PlacementsOptions): Promise<PlacementsRecord> {
  const { log } = options
  const t0 = performance.now()
  const devices = await discoverDevices()
  const discoverMs = performance.now() - t0
  log(`placements: devices ${devices.filter((d) => d.status === 'ready').map((d) => `${d.id} (${d.name})`).join(', ')} ready, probed in ${(discoverMs / 1000).toFixed(1)} s`)

  const loaded = await loadModel(options.modelPath)
  if (loaded.weights === null) throw new Error(`${options.modelPath}: the weights did not load`)
  const model = { config: loaded.config, weights: loaded.weights }
  const weights = weightInfoOf(model.weights)
  const chunk = PLACEMENT_PROMPT_TOKENS

  log('placements: measuring the devices for Auto (profileDevices)')
  const tp = performance.now()
  const profile = await profileDevices(model, devices, { prefillChunkTokens: chunk })
  const profileMs = performance.now() - tp
  log(`placements: profiled in ${(profileMs / 1000).toFixed(1)} s`)

  log(`placements: hand-off latency, ${HANDOFF_ROUNDS} rounds of ${HANDOFF_HOPS} hops`)
  const handoff: HandoffMeasurement[] = []
  for (let i = 0; i < HANDOFF_ROUNDS; i++) handoff.push(await measureHandoff({ hops: HANDOFF_HOPS, reps: 1 }))

  const cost = { config: model.config, profile, devices }
  const candidates: Candidate[] = PRESET_IDS.map((id) => {
    try {
      if (id === 'auto') {
        const plan = planAuto(model.config, devices, profile, { weights, prefillChunkTokens: chunk, name: PRESET_LABELS.auto })
        return { id, note: plan.explanation, placement: plan.placement, skipped: null, predictedMs: plan.predictedMs }
      }
      const { placement, note } = buildPreset(id, model.config, devices, { weights, prefillChunkTokens: chunk, profile })
      let predictedMs: Candidate['predictedMs'] = null
      try {
        predictedMs = predictPlacement(placement, cost)
      } catch {
        // the profile lacks a group on a device this preset uses: no prediction, still measured
      }
      return { id, note, placement, skipped: null, predictedMs }
    } catch (e) {
      return { id, note: null, placement: null, skipped: `not valid on this machine: ${errorText(e)}`, predictedMs: null }
    }
  })

  const summary = await summarizeGguf(options.modelPath)
  const prompt = promptTokens(summary, PLACEMENT_PROMPT_TOKENS, PROMPT_SEED)
  const children = new Map<PresetId, PlacementChild>()
  const failures = new Map<PresetId, string>()
  const calls = new Map<PresetId, { prefill: TimedCall[]; decode: TimedCall[]; tokens: number[] }>()
  try {
    for (const c of candidates) {
      if (c.placement === null) continue
      log(`placements: opening ${PRESET_LABELS[c.id]} and warming it up`)
      try {
        const child = await PlacementChild.start(PRESET_LABELS[c.id], {
          role: 'placement',
          modelPath: options.modelPath,
          placement: c.placement,
          devices,
          contextSize: CONTEXT_SIZE,
          graphCacheDir: options.graphCacheDir
        })
        children.set(c.id, child)
        // warm-up: the same shapes as the measured reps (WebGPU compiles shaders per shape on first use)
        const first = await child.run({ op: 'prefill', tokens: prompt })
        await child.run({ op: 'decode', first: first.tokens[0], pos: prompt.length, steps: PLACEMENT_DECODE_STEPS })
        calls.set(c.id, { prefill: [], decode: [], tokens: [] })
      } catch (e) {
        failures.set(c.id, `failed to run: ${errorText(e)}`)
        log(`placements: ${PRESET_LABELS[c.id]} failed: ${errorText(e)}`)
      }
    }
    const order = [...calls.keys()]
    for (let r = 0; r < options.reps; r++) {
      const rotated = [...order.slice(r % order.length), ...order.slice(0, r % order.length)]
      for (const id of rotated) {
        const child = children.get(id)
        const out = calls.get(id)
        if (child === undefined || out === undefined || failures.has(id)) continue
        try {
          const all = [...children.values()]
          const pre = await prefillRep(child, prompt, all)
          // the cache holds the prompt now: decode continues from the last prefill's greedy token
          const dec = await timed(child, { op: 'decode', first: pre.token, pos: prompt.length, steps: PLACEMENT_DECODE_STEPS }, all)
          out.prefill.push(pre.call)
          out.decode.push({ ms: dec.ms, busy: dec.busy, otherCpuPct: dec.otherCpuPct, count: 1 })
          if (r === 0) out.tokens.push(pre.token, ...dec.tokens)
        } catch (e) {
          failures.set(id, `failed in rep ${r + 1}: ${errorText(e)}`)
          log(`placements: ${PRESET_LABELS[id]} failed: ${errorText(e)}`)
        }
      }
      log(`placements: rep ${r + 1}/${options.reps} done`)
    }
  } finally {
    for (const child of children.values()) await child.close()
  }

  const runs: PlacementRun[] = candidates.map((c) => {
    const child = children.get(c.id)
    const out = calls.get(c.id)
    const sameAs = c.placement === null ? [] : candidates.filter((o) => o.id !== c.id && o.placement !== null && c.placement !== null && samePlacement(o.placement, c.placement)).map((o) => o.id)
    return {
      id: c.id,
      label: PRESET_LABELS[c.id],
      note: c.note,
      placement: c.placement,
      skipped: c.skipped ?? failures.get(c.id) ?? null,
      predictedMs: c.predictedMs,
      sameAs,
      deviceIds: child?.deviceIds ?? [],
      loadMs: child?.loadMs ?? null,
      setup: child?.setup ?? null,
      prefill: out?.prefill ?? [],
      decode: out?.decode ?? [],
      tokens: out?.tokens ?? []
    }
  })
  return {
    model: { label: options.modelLabel, path: options.modelPath },
    promptTokens: PLACEMENT_PROMPT_TOKENS,
    decodeSteps: PLACEMENT_DECODE_STEPS,
    prefillChunkTokens: chunk,
    reps: options.reps,
    devices: devices.map(deviceRecord),
    discoverMs,
    profileMs,
    runs,
    handoff,
    wallMs: performance.now() - t0
  }
}
