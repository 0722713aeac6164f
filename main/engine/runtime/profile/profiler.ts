/**
 * @file The device profiler: measures what the planner's cost model predicts from (plan/profile.ts).
 *
 * The graphs (profile-graphs.ts) are compiled once per graph target: a trivial one-Add graph (the run
 * overhead), each op-group kind as a single-group segment and layer 0 as one segment (the
 * calibration). Then, per ready device, one at a time, the device worker the runtime itself would run
 * (a DeviceHost) opens each graph on that device alone (CPU fallback off) and times whole runs at a few
 * run lengths (1, 16, 64 and the prefill chunk by default) over `pastTokens` cached positions: the median
 * of several runs after a warm-up (hetero/session-timing.ts). profile-timing.ts turns those medians into
 * group and part times. Finally the hand-off is timed on the same command channel and value arena the
 * runtime hands tensors over with (link.ts), one figure for every pair.
 *
 * One device at a time: two WebGPU sessions on two threads at once crash the process, and concurrent
 * measurements on shared cores would disturb each other. A second worker of the same EP on the same
 * cores (same ep and kind, listed in sharesComputeWith: the extra CPU worker) runs the same kernels on
 * the same cores, so it gets the first one's times rather than a second measurement whose only
 * difference would be the machine's noise. A graph a device refuses is left out of that device's
 * profile and reported through onProgress; the solver then never places that group there.
 */
import { defaultIntraOpThreads, ortVersion, type DeviceInfo } from '../../devices'
import { graphTargetOf, type CompilableModel, type GraphTarget, type GroupKind } from '../../graph'
import { modelShapeKey, OP_GROUP_NAMES, parseProfile, PROFILE_VERSION, weightInfoOf, type DeviceProfile, type LinkCost, type MatmulGroup, type Profile } from '../../plan'
import { DeviceHost } from '../hetero/device-host'
import type { SamplingRules } from '../hetero/session-timing'
import { ValueArena } from '../hetero/value-arena'
import { UsageBoard } from '../usage'
import { measureLink } from './link'
import { compileProfileGraphs, partGroupOf, profileParts, sampleLengths, type ProfileGraph, type ProfileTarget } from './profile-graphs'
import { deviceGroupTimings, devicePartitionTimings, type PartRuns, type RunSample } from './profile-timing'

/** Run lengths sampled besides the prefill chunk (tokens). */
export const DEFAULT_PROFILE_TOKENS: readonly number[] = Object.freeze([1, 16, 64])
/** Cached positions attention reads while timed: a typical early-conversation length. */
export const DEFAULT_PAST_TOKENS = 64
/** Hand-off cost used when links are not measured (one device, or measureLinks false): 50 µs + 0.1 ms/MiB. */
export const DEFAULT_LINK: LinkCost = Object.freeze({ fixedMs: 0.05, msPerMiB: 0.1 })
/**
 * How each (graph, run length) is sampled: 2 warm-up runs (the first on WebGPU compiles shaders for the
 * shape), then timed runs until ~100 ms went into them, 3 at least and 40 at most (µs-size graphs need
 * many for a stable median); a graph whose first run takes 400 ms or more (110M-size on a software GPU)
 * gets one warm-up and one timed run.
 */
export const DEFAULT_PROFILE_SAMPLING: SamplingRules = Object.freeze({ warmupRuns: 2, minRuns: 3, maxRuns: 40, budgetMs: 100, slowRunMs: 400 })

/** Options for profileDevices. */
export interface ProfileOptions {
  /** run lengths to sample (the prefill chunk is always added); default DEFAULT_PROFILE_TOKENS */
  readonly tokens?: readonly number[]
  /** the prefill chunk the placement will use; default the planner's defaultPrefillChunkTokens */
  readonly prefillChunkTokens?: number
  /** cached positions during the timed runs; default DEFAULT_PAST_TOKENS */
  readonly pastTokens?: number
  /** ORT intra-op threads per session; default ORT's (all cores) */
  readonly threads?: number
  /** as the production graphs will be compiled (GraphOptions.int8Activations); default true */
  readonly int8Activations?: boolean
  /** measure the hand-off between threads (default true with two or more ready devices) */
  readonly measureLinks?: boolean
  readonly sampling?: SamplingRules
  readonly signal?: AbortSignal
  readonly onProgress?: (progress: ProfileProgress) => void
}

/** Where profiling is: steps done of the total (compiling graphs, measuring each graph per device, the link). */
export interface ProfileProgress {
  readonly stage: 'compile' | 'measure' | 'link'
  /** the device measured, null while compiling and for the link */
  readonly device: string | null
  /** the graph just compiled or measured; null for a device that took its twin's times, and for the link */
  readonly target: ProfileTarget | null
  readonly doneSteps: number
  readonly totalSteps: number
  /** why the device refused this graph (it is left out of the device's profile); null when it ran */
  readonly failure: string | null
}

/** Cache keys for a profile (see main/store device profiles). */
export interface ProfileCacheKeys {
  /** the ready devices (sorted ids with their EPs and names), the ORT version and the thread setting */
  readonly deviceKey: string
  /** modelShapeKey plus how the weights are stored (quantized matmuls time differently) */
  readonly shapeKey: string
}

/** Bump when what a profile measures changes, so stored profiles are measured again (2: row-partition parts; 3: timed in the runtime's device workers, hand-off as its command round trip). */
export const PROFILER_VERSION = 3

/** The keys a profile of `model` on `devices` is cached under. */
export function profileCacheKeys(model: CompilableModel, devices: readonly DeviceInfo[], options: Pick<ProfileOptions, 'threads' | 'int8Activations'> = {}): ProfileCacheKeys {
  const ready = devices.filter((d) => d.status === 'ready').sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const deviceKey = `profiler ${PROFILER_VERSION}; onnxruntime ${ortVersion()}; threads ${options.threads ?? defaultIntraOpThreads() ?? 'default'}; ${ready.map((d) => `${d.id}=${d.ep} (${d.name})`).join(', ')}`
  const w = weightInfoOf(model.weights)
  const weights = w.quantized ? `q${w.bitsPerWeight}${options.int8Activations === false ? '' : ' int8-act'}` : 'f32'
  return { deviceKey, shapeKey: `${modelShapeKey(model.config)} weights=${weights}` }
}

/** The earlier device `d` is a second worker of (same EP and kind, sharing its compute), or null. */
function twinOf(d: DeviceInfo, earlier: readonly DeviceInfo[]): DeviceInfo | null {
  return earlier.find((e) => e.ep === d.ep && e.kind === d.kind && (e.sharesComputeWith.includes(d.id) || d.sharesComputeWith.includes(e.id))) ?? null
}

/** Longest failure reason kept (ORT's messages can carry whole node lists). */
const MAX_REASON_LENGTH = 500

/** First line of an error, cut to MAX_REASON_LENGTH. */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const line = message.split('\n').find((l) => l.trim().length > 0) ?? 'unknown error'
  return line.length > MAX_REASON_LENGTH ? `${line.slice(0, MAX_REASON_LENGTH - 1)}…` : line
}

/** What one device is asked to time: its graphs, each at its run lengths over `pastTokens` cached positions. */
interface DeviceTimings {
  readonly device: DeviceInfo
  readonly threads: number | undefined
  readonly pastTokens: number
  readonly graphs: readonly ProfileGraph[]
  readonly rules: SamplingRules
}

/**
 * Times every graph on one device through a device worker of its own, handing each graph's outcome to
 * `onResult` (samples, or the reason the device refused it). The worker has exited when this settles, so
 * the next device (maybe WebGPU) never overlaps it; an abort takes effect between two timed runs.
 */
async function timeOnDevice(job: DeviceTimings, onResult: (target: ProfileTarget, samples: readonly RunSample[] | null, failure: string | null) => void, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted()
  const { device } = job
  const host = DeviceHost.start({ deviceId: device.id, ep: device.ep, threads: job.threads, arena: ValueArena.create([]).init, usage: new UsageBoard().buffer, usageSlot: 0, kv: { nKvHeads: 1, headDim: 1, maxLen: 1 } })
  try {
    for (const [i, graph] of job.graphs.entries()) {
      signal?.throwIfAborted()
      const key = `profile-${i}`
      let samples: RunSample[] | null = null
      let failure: string | null = null
      try {
        // a copy: the bytes are transferred to the worker, and another device of the same target needs them too
        await host.loadSession(key, graph.target, graph.bytes.slice())
        samples = []
        for (const tokens of graph.tokens) {
          signal?.throwIfAborted()
          samples.push({ tokens, ms: await host.measure({ session: key, inputs: graph.inputs, tokens, pastTokens: job.pastTokens, rules: job.rules }) })
        }
      } catch (err) {
        if (signal?.aborted === true) throw signal.reason instanceof Error ? signal.reason : new Error('profiling aborted')
        samples = null
        failure = reasonOf(err)
      }
      await host.releaseSession(key)
      onResult(graph.target, samples, failure)
    }
  } finally {
    await host.dispose()
  }
}

/**
 * Measures every op-group kind of `model` on each ready device (one device at a time, each in a device
 * worker of its own) and the hand-off between workers; returns a Profile the solver can use. Throws when
 * no device is ready or the signal aborts (every worker is ended first).
 */
export async function profileDevices(model: CompilableModel, devices: readonly DeviceInfo[], options: ProfileOptions = {}): Promise<Profile> {
  const ready = devices.filter((d) => d.status === 'ready')
  if (ready.length === 0) throw new Error('no ready device to profile')
  const measureLinks = (options.measureLinks ?? true) && ready.length >= 2
  const lengths = sampleLengths(model, options.tokens ?? DEFAULT_PROFILE_TOKENS, options.prefillChunkTokens, options.pastTokens ?? DEFAULT_PAST_TOKENS)
  const twins = new Map(ready.map((d, i) => [d.id, twinOf(d, ready.slice(0, i))]))
  const measured = ready.filter((d) => twins.get(d.id) === null)
  const targets = new Set(measured.map((d) => graphTargetOf(d.ep)))
  const parts = profileParts(model.config)
  const shares = new Map(parts.map((p) => [p.group, p.share]))
  // per target each op-group kind and partition part compiled; per measured device each of those, the stack and the overhead twice; one step per twin
  const perTarget = OP_GROUP_NAMES.length + parts.length
  const totalSteps = targets.size * perTarget + measured.length * (perTarget + 3) + (ready.length - measured.length) + (measureLinks ? 1 : 0)
  let doneSteps = 0
  const report = (stage: ProfileProgress['stage'], device: string | null, target: ProfileTarget | null, failure: string | null = null): void => {
    doneSteps++
    options.onProgress?.({ stage, device, target, doneSteps, totalSteps, failure })
  }

  const compiled = new Map<GraphTarget, ProfileGraph[]>()
  const byId = new Map<string, DeviceProfile>()
  for (const device of ready) {
    const twin = twins.get(device.id) ?? null
    if (twin !== null) {
      const copy = byId.get(twin.id)
      if (copy !== undefined) byId.set(device.id, { ...copy, device: device.id })
      report('measure', device.id, null)
      continue
    }
    const target = graphTargetOf(device.ep)
    let graphs = compiled.get(target)
    if (graphs === undefined) {
      graphs = await compileProfileGraphs(model, lengths, target, options, (t) => report('compile', null, t))
      compiled.set(target, graphs)
    }
    const groups = new Map<GroupKind, readonly RunSample[]>()
    const partRuns = new Map<MatmulGroup, PartRuns>()
    let stack: readonly RunSample[] | undefined
    let runOverheadMs = Infinity
    const job: DeviceTimings = { device, threads: options.threads, pastTokens: lengths.pastTokens, graphs, rules: options.sampling ?? DEFAULT_PROFILE_SAMPLING }
    await timeOnDevice(job, (t, samples, failure) => {
      // a refused graph (no samples) is left out of this device's profile; its failure is reported
      const part = partGroupOf(t)
      const kind = OP_GROUP_NAMES.find((g) => g === t)
      if (samples === null) {
        // nothing to record
      } else if (t === 'overhead') runOverheadMs = Math.min(runOverheadMs, samples[0].ms)
      else if (t === 'layer-stack') stack = samples
      else if (part !== null) {
        const share = shares.get(part)
        if (share !== undefined) partRuns.set(part, { share, runs: samples })
      } else if (kind !== undefined) groups.set(kind, samples)
      report('measure', device.id, t, failure)
    }, options.signal)
    // a device that cannot run one Add is left out entirely (its failure was reported)
    if (runOverheadMs === Infinity) continue
    const partitions = devicePartitionTimings(partRuns, groups, stack, runOverheadMs, lengths.stackLayers)
    byId.set(device.id, { device: device.id, runOverheadMs, groups: deviceGroupTimings(groups, stack, runOverheadMs, lengths.stackLayers), partitions })
  }

  let defaultLink: LinkCost = DEFAULT_LINK
  if (measureLinks) {
    const link = await measureLink(options.signal)
    defaultLink = { fixedMs: link.fixedMs, msPerMiB: link.msPerMiB }
    report('link', null, null)
  }
  const profiles = ready.flatMap((d) => byId.get(d.id) ?? [])
  // validate what we produce with the reader the cache uses, so a profile that parses is all we ever hand out
  return parseProfile({ version: PROFILE_VERSION, modelShape: modelShapeKey(model.config), devices: profiles, links: [], defaultLink })
}
