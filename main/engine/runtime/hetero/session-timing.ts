/**
 * @file Timing one session where the runtime runs it: a device worker, asked by the profiler, times whole
 * runs of a session it opened at one run length (`tokens` tokens over `pastTokens` cached positions) and
 * returns the median. Inputs are synthetic but shaped exactly like the runtime's; the median comes after
 * warm-up runs (the first run on WebGPU compiles shaders for the shape), over enough runs for µs-size
 * graphs to be stable, and a slow graph (a 110M FFN on a software GPU) gets one warm-up and one timed run.
 */
import { FieldReader, readInteger, type Fail } from '../../../common/reader'
import { float32Tensor, int64Tensor, type OrtSession, type OrtTensor } from '../../devices'

/** A symbolic dim: fixed, the run's token count ('seq'), or the cached length ('capacity'). */
export type TimedDim = number | 'seq' | 'capacity'

/** One session input by its graph name, with how its dims are filled. */
export interface TimedInput {
  readonly name: string
  readonly elem: 'float32' | 'int64'
  readonly dims: readonly TimedDim[]
}

/** How long to sample one (session, run length). */
export interface SamplingRules {
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

/** What a device worker is asked to time. */
export interface TimingRequest {
  /** the session key (opened earlier on this worker) */
  readonly session: string
  readonly inputs: readonly TimedInput[]
  readonly tokens: number
  readonly pastTokens: number
  readonly rules: SamplingRules
}

/** Most inputs of a timed graph (a single-group graph reads at most six values). */
export const MAX_TIMED_INPUTS = 16
/** Most dims per input. */
const MAX_TIMED_DIMS = 8
/** Largest run length or cached length timed (tokens). */
export const MAX_TIMED_TOKENS = 1 << 16
/** Largest fixed dim of an input (vocabulary sizes, hidden widths). */
const MAX_TIMED_DIM = 1 << 24
/** Most runs one sample takes. */
const MAX_TIMED_RUNS = 1000
/** Longest session key or input name. */
const MAX_NAME_LENGTH = 4096

/** Reads a timing request at `path`. */
export function readTimingRequest(fail: Fail, path: string, v: unknown): TimingRequest {
  const r = new FieldReader(fail, path, v)
  const rules = r.record('rules')
  const minRuns = rules.int('minRuns', 1, MAX_TIMED_RUNS)
  return {
    session: r.string('session', MAX_NAME_LENGTH),
    inputs: r.records('inputs', MAX_TIMED_INPUTS, (input) => ({
      name: input.string('name', MAX_NAME_LENGTH),
      elem: input.choice('elem', ['float32', 'int64']),
      dims: input.list('dims', MAX_TIMED_DIMS).map((d, i) => (d === 'seq' || d === 'capacity' ? d : readInteger(fail, `${input.at('dims')}[${i}]`, d, 1, MAX_TIMED_DIM)))
    })),
    tokens: r.int('tokens', 1, MAX_TIMED_TOKENS),
    pastTokens: r.int('pastTokens', 1, MAX_TIMED_TOKENS),
    rules: {
      warmupRuns: rules.int('warmupRuns', 1, MAX_TIMED_RUNS),
      minRuns,
      maxRuns: rules.int('maxRuns', minRuns, MAX_TIMED_RUNS),
      budgetMs: rules.number('budgetMs', 0, Number.MAX_VALUE),
      slowRunMs: rules.number('slowRunMs', 0, Number.MAX_VALUE)
    }
  }
}

/**
 * The feeds of one run: floats are a slow sine in [−0.5, 0.5] (deterministic, finite, varied — no all-zero
 * shortcuts — and never denormal); positions count up from the cached length.
 */
function feedsOf(request: TimingRequest): Record<string, OrtTensor> {
  const feeds: Record<string, OrtTensor> = {}
  for (const input of request.inputs) {
    const dims = input.dims.map((d) => (d === 'seq' ? request.tokens : d === 'capacity' ? request.pastTokens : d))
    const n = dims.reduce((acc, d) => acc * d, 1)
    if (input.elem === 'int64') {
      const ints = new BigInt64Array(n)
      for (let i = 0; i < n; i++) ints[i] = BigInt(request.pastTokens + i)
      feeds[input.name] = int64Tensor(ints, dims)
    } else {
      const floats = new Float32Array(n)
      for (let i = 0; i < n; i++) floats[i] = 0.5 * Math.sin(0.37 * i + 0.1)
      feeds[input.name] = float32Tensor(floats, dims)
    }
  }
  return feeds
}

/** Wall time of one whole run, ms. */
async function timedRun(session: OrtSession, feeds: Record<string, OrtTensor>): Promise<number> {
  const t0 = performance.now()
  await session.run(feeds)
  return performance.now() - t0
}

/** The median wall time (ms) of whole runs of `session` as `request` says, after its warm-up runs. */
export async function medianRunMs(session: OrtSession, request: TimingRequest): Promise<number> {
  const { rules } = request
  const feeds = feedsOf(request)
  const slow = (await timedRun(session, feeds)) >= rules.slowRunMs
  if (!slow) for (let i = 1; i < rules.warmupRuns; i++) await session.run(feeds)
  const minRuns = slow ? 1 : rules.minRuns
  const times: number[] = []
  let spentMs = 0
  while (times.length < minRuns || (!slow && times.length < rules.maxRuns && spentMs < rules.budgetMs)) {
    const ms = await timedRun(session, feeds)
    times.push(ms)
    spentMs += ms
  }
  times.sort((a, b) => a - b)
  const mid = times.length >> 1
  return times.length % 2 === 1 ? times[mid] : (times[mid - 1] + times[mid]) / 2
}
