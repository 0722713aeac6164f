/**
 * @file The device-profile worker's wire protocol: its init data (the device, the compiled graphs with
 * their symbolic input shapes, the sampling rules) and its messages back, with validators that turn an
 * unknown value into one of them or throw ProtocolError. Both sides validate what they receive.
 */
import type { GroupKind } from '../../graph'
import { MATMUL_GROUPS, OP_GROUP_NAMES, type MatmulGroup } from '../../plan'
import { ProtocolError } from '../errors'

/** Most graphs one device worker measures (the op-group kinds, the partition parts, the overhead and calibration graphs, with margin). */
export const MAX_PROFILE_GRAPHS = 32
/** Most graph inputs (a single-group graph reads at most six values). */
export const MAX_PROFILE_INPUTS = 16
/** Most dims per input. */
export const MAX_PROFILE_INPUT_DIMS = 8
/** Most token counts sampled per graph. */
export const MAX_PROFILE_TOKEN_COUNTS = 16
/** Largest run length or cached length sampled (tokens). */
export const MAX_PROFILE_TOKENS = 1 << 16
/** Largest fixed dimension of an input (vocabulary sizes, hidden widths). */
export const MAX_PROFILE_DIM = 1 << 24
/** Most timed runs per sample. */
export const MAX_PROFILE_RUNS = 1000
/** Longest id, EP name or error text accepted on the wire. */
export const MAX_PROFILE_TEXT = 4096

/** A graph of part a of a row partition of one matmul group (see profile-graphs.ts for the ratio). */
export type PartTarget = `part:${MatmulGroup}`

/** The target naming the partition-part graph of `group`. */
export function partTarget(group: MatmulGroup): PartTarget {
  return `part:${group}`
}

/** True when `target` names a partition-part graph. */
export function isPartTarget(target: ProfileTarget): target is PartTarget {
  return MATMUL_GROUPS.some((g) => partTarget(g) === target)
}

/** The matmul group a partition-part target measures. */
export function partGroupOf(target: PartTarget): MatmulGroup {
  const group = MATMUL_GROUPS.find((g) => partTarget(g) === target)
  if (group === undefined) throw new Error(`${target} names no matmul group`)
  return group
}

/**
 * What a graph measures: one op-group kind, the trivial graph that gives the run overhead, the first
 * layers fused into one segment (which calibrates the single-group times), or a partition part.
 */
export type ProfileTarget = GroupKind | 'overhead' | 'layer-stack' | PartTarget

/** A symbolic dim: fixed, or the run's token count ('seq'), or the cached length ('capacity'). */
export type ProfileDim = number | 'seq' | 'capacity'

/** One graph input, by its graph name. */
export interface ProfileInput {
  readonly name: string
  readonly elem: 'float32' | 'int64'
  readonly dims: readonly ProfileDim[]
}

/** A compiled graph to time at each of `tokens`. */
export interface ProfileGraph {
  readonly target: ProfileTarget
  readonly bytes: Uint8Array
  readonly inputs: readonly ProfileInput[]
  /** run lengths to sample, ascending */
  readonly tokens: readonly number[]
}

/** How long to sample each (graph, token count). */
export interface ProfileSamplingRules {
  /** untimed runs first, at least one (WebGPU compiles shaders per shape on the first run) */
  readonly warmupRuns: number
  readonly minRuns: number
  readonly maxRuns: number
  /** stop adding runs past minRuns once this much time went into the timed runs */
  readonly budgetMs: number
  /**
   * a graph whose first (warm-up) run takes at least this long gets no more warm-up and one timed run:
   * its own length dwarfs the noise, and three runs of a 110M-size FFN on a software GPU take seconds
   */
  readonly slowRunMs: number
}

/** The device worker's workerData. */
export interface ProfileWorkerInit {
  readonly deviceId: string
  readonly ep: string
  /** ORT intra-op threads; null = ORT's default */
  readonly threads: number | null
  /** cached positions the attention graph reads (its 'capacity' dims and the first position) */
  readonly pastTokens: number
  readonly graphs: readonly ProfileGraph[]
  readonly rules: ProfileSamplingRules
}

/** One measurement: the median wall time of a whole session run of `tokens` tokens, ms. */
export interface RunSample {
  readonly tokens: number
  readonly ms: number
}

/** worker -> main. */
export type ProfileWorkerMessage =
  | { readonly type: 'measured'; readonly target: ProfileTarget; readonly samples: readonly RunSample[] }
  | { readonly type: 'failed'; readonly target: ProfileTarget; readonly reason: string }
  | { readonly type: 'done' }
  | { readonly type: 'fatal'; readonly message: string }

const TARGETS: readonly ProfileTarget[] = [...OP_GROUP_NAMES, 'overhead', 'layer-stack', ...MATMUL_GROUPS.map(partTarget)]

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function record(v: unknown, what: string): Record<string, unknown> {
  if (!isRecord(v)) throw new ProtocolError(`${what} must be an object`)
  return v
}

function list(v: unknown, what: string, max: number): readonly unknown[] {
  if (!Array.isArray(v) || v.length > max) throw new ProtocolError(`${what} must be an array of at most ${max} entries`)
  return v
}

function text(v: unknown, what: string): string {
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_PROFILE_TEXT) throw new ProtocolError(`${what} must be a non-empty string of at most ${MAX_PROFILE_TEXT} characters`)
  return v
}

function int(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new ProtocolError(`${what} must be an integer in [${min}, ${max}], got ${String(v)}`)
  return v
}

function ms(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ProtocolError(`${what} must be a finite non-negative number of ms`)
  return v
}

function target(v: unknown, what: string): ProfileTarget {
  const found = TARGETS.find((t) => t === v)
  if (found === undefined) throw new ProtocolError(`${what} must be one of ${TARGETS.join(', ')}, got ${String(v)}`)
  return found
}

/** Ascending, distinct token counts in [1, MAX_PROFILE_TOKENS]. */
function tokenCounts(v: unknown, what: string): number[] {
  const out = list(v, what, MAX_PROFILE_TOKEN_COUNTS).map((t, i) => int(t, `${what}[${i}]`, 1, MAX_PROFILE_TOKENS))
  if (out.length === 0) throw new ProtocolError(`${what} must not be empty`)
  out.forEach((t, i) => {
    if (i > 0 && t <= out[i - 1]) throw new ProtocolError(`${what} must be ascending`)
  })
  return out
}

function parseInput(v: unknown, what: string): ProfileInput {
  const r = record(v, what)
  const elem = r.elem === 'float32' || r.elem === 'int64' ? r.elem : null
  if (elem === null) throw new ProtocolError(`${what}.elem must be float32 or int64`)
  const dims = list(r.dims, `${what}.dims`, MAX_PROFILE_INPUT_DIMS).map((d, i): ProfileDim => (d === 'seq' || d === 'capacity' ? d : int(d, `${what}.dims[${i}]`, 1, MAX_PROFILE_DIM)))
  return { name: text(r.name, `${what}.name`), elem, dims }
}

function parseGraph(v: unknown, what: string): ProfileGraph {
  const r = record(v, what)
  if (!(r.bytes instanceof Uint8Array) || r.bytes.length === 0) throw new ProtocolError(`${what}.bytes must be a non-empty Uint8Array`)
  const inputs = list(r.inputs, `${what}.inputs`, MAX_PROFILE_INPUTS).map((x, i) => parseInput(x, `${what}.inputs[${i}]`))
  return { target: target(r.target, `${what}.target`), bytes: r.bytes, inputs, tokens: tokenCounts(r.tokens, `${what}.tokens`) }
}

function parseRules(v: unknown): ProfileSamplingRules {
  const r = record(v, 'rules')
  const minRuns = int(r.minRuns, 'rules.minRuns', 1, MAX_PROFILE_RUNS)
  return {
    warmupRuns: int(r.warmupRuns, 'rules.warmupRuns', 1, MAX_PROFILE_RUNS),
    minRuns,
    maxRuns: int(r.maxRuns, 'rules.maxRuns', minRuns, MAX_PROFILE_RUNS),
    budgetMs: ms(r.budgetMs, 'rules.budgetMs'),
    slowRunMs: ms(r.slowRunMs, 'rules.slowRunMs')
  }
}

/** Validates the device worker's init data. */
export function parseProfileWorkerInit(v: unknown): ProfileWorkerInit {
  const r = record(v, 'profile worker init data')
  return {
    deviceId: text(r.deviceId, 'deviceId'),
    ep: text(r.ep, 'ep'),
    threads: r.threads === null ? null : int(r.threads, 'threads', 0, 1024),
    pastTokens: int(r.pastTokens, 'pastTokens', 1, MAX_PROFILE_TOKENS),
    graphs: list(r.graphs, 'graphs', MAX_PROFILE_GRAPHS).map((g, i) => parseGraph(g, `graphs[${i}]`)),
    rules: parseRules(r.rules)
  }
}

/** Validates a message from the device worker. */
export function parseProfileWorkerMessage(v: unknown): ProfileWorkerMessage {
  const r = record(v, 'profile worker message')
  switch (r.type) {
    case 'measured': {
      const samples = list(r.samples, 'samples', MAX_PROFILE_TOKEN_COUNTS).map((s, i) => {
        const x = record(s, `samples[${i}]`)
        return { tokens: int(x.tokens, `samples[${i}].tokens`, 1, MAX_PROFILE_TOKENS), ms: ms(x.ms, `samples[${i}].ms`) }
      })
      if (samples.length === 0) throw new ProtocolError('a measurement needs at least one sample')
      return { type: 'measured', target: target(r.target, 'target'), samples }
    }
    case 'failed':
      return { type: 'failed', target: target(r.target, 'target'), reason: text(r.reason, 'reason') }
    case 'done':
      return { type: 'done' }
    case 'fatal':
      return { type: 'fatal', message: text(r.message, 'message') }
    default:
      throw new ProtocolError(`unknown profile worker message type ${String(r.type)}`)
  }
}

/** Parent → profile worker: stop after the current run (the profile was aborted). */
export const PROFILE_STOP_MESSAGE = 'stop'
