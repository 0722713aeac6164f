/**
 * @file Device-profile worker entry: opens each graph it was given on ONE device (CPU fallback off, so
 * what is timed really ran there), times it at each token count and posts the median run times back,
 * one message per graph. A graph the device refuses is reported as failed and the rest go on. Runs in
 * its own thread because onnxruntime-node's run() blocks its thread; the profiler starts one of these
 * per device, one after another (two WebGPU sessions on two threads at once crash the process).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { createSession, float32Tensor, int64Tensor, type OrtSession, type OrtTensor } from '../../devices'
import { parseProfileWorkerInit, PROFILE_STOP_MESSAGE, type ProfileGraph, type ProfileWorkerInit, type ProfileWorkerMessage, type RunSample, type ProfileSamplingRules } from './profile-protocol'

/** Longest failure reason posted back (ORT's messages can carry whole node lists). */
const MAX_REASON_LENGTH = 500

const port = parentPort
if (!port) throw new Error('profile-worker.ts must run as a worker thread')

/** Set when the parent asks to stop (the profile was aborted); checked between runs. */
let stopped = false
// terminating a thread inside a native session run can abort the whole process, so the parent asks
// instead: the current run finishes, the session is released, and the thread ends by itself
port.on('message', (m: unknown) => {
  if (m === PROFILE_STOP_MESSAGE) stopped = true
})

class Stopped extends Error {}
const checkStopped = (): void => {
  if (stopped) throw new Stopped('stopped')
}

function post(message: ProfileWorkerMessage): void {
  port?.postMessage(message)
}

/** First line of an error, cut to MAX_REASON_LENGTH. */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const line = message.split('\n').find((l) => l.trim().length > 0) ?? 'unknown error'
  return line.length > MAX_REASON_LENGTH ? `${line.slice(0, MAX_REASON_LENGTH - 1)}…` : line
}

/**
 * Input buffers for one graph, sized for its largest run and shared by every run length as prefix
 * views (inputs are passed to ORT without a copy). Floats are a slow sine in [−0.5, 0.5]: deterministic,
 * finite, varied (no all-zero shortcuts) and never denormal; positions count up from the cached length.
 */
function inputBuffers(graph: ProfileGraph, pastTokens: number): Map<string, Float32Array | BigInt64Array> {
  const maxTokens = graph.tokens[graph.tokens.length - 1]
  const out = new Map<string, Float32Array | BigInt64Array>()
  for (const input of graph.inputs) {
    const n = input.dims.reduce<number>((acc, d) => acc * (d === 'seq' ? maxTokens : d === 'capacity' ? pastTokens : d), 1)
    if (input.elem === 'int64') {
      const ints = new BigInt64Array(n)
      for (let i = 0; i < n; i++) ints[i] = BigInt(pastTokens + i)
      out.set(input.name, ints)
    } else {
      const floats = new Float32Array(n)
      for (let i = 0; i < n; i++) floats[i] = 0.5 * Math.sin(0.37 * i + 0.1)
      out.set(input.name, floats)
    }
  }
  return out
}

/** The feeds for a run of `tokens` tokens: views into the shared buffers with concrete dims. */
function feedsFor(graph: ProfileGraph, buffers: Map<string, Float32Array | BigInt64Array>, tokens: number, pastTokens: number): Record<string, OrtTensor> {
  const feeds: Record<string, OrtTensor> = {}
  for (const input of graph.inputs) {
    const dims = input.dims.map((d) => (d === 'seq' ? tokens : d === 'capacity' ? pastTokens : d))
    const n = dims.reduce((acc, d) => acc * d, 1)
    const buffer = buffers.get(input.name)
    if (buffer === undefined) throw new Error(`no buffer for input ${input.name}`)
    feeds[input.name] = buffer instanceof BigInt64Array ? int64Tensor(buffer.subarray(0, n), dims) : float32Tensor(buffer.subarray(0, n), dims)
  }
  return feeds
}

/** Wall time of one whole run, ms. */
async function timedRun(session: OrtSession, feeds: Record<string, OrtTensor>): Promise<number> {
  checkStopped()
  const t0 = performance.now()
  await session.run(feeds)
  return performance.now() - t0
}

/** Median wall time (ms) of whole runs, after the warm-up runs, sampled per `rules` (a slow graph: one of each). */
async function medianRunMs(session: OrtSession, feeds: Record<string, OrtTensor>, rules: ProfileSamplingRules): Promise<number> {
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

/** One graph on this worker's device at each of its token counts; the session is released either way. */
async function measure(graph: ProfileGraph, init: ProfileWorkerInit): Promise<RunSample[]> {
  const session = await createSession(graph.bytes, { ep: init.ep, cpuFallback: false, ...(init.threads !== null ? { intraOpThreads: init.threads } : {}) })
  try {
    const buffers = inputBuffers(graph, init.pastTokens)
    const samples: RunSample[] = []
    for (const tokens of graph.tokens) {
      samples.push({ tokens, ms: await medianRunMs(session, feedsFor(graph, buffers, tokens, init.pastTokens), init.rules) })
    }
    return samples
  } finally {
    await session.release()
  }
}

async function main(): Promise<void> {
  const init = parseProfileWorkerInit(workerData)
  for (const graph of init.graphs) {
    if (stopped) return
    try {
      post({ type: 'measured', target: graph.target, samples: await measure(graph, init) })
    } catch (err) {
      if (err instanceof Stopped) return
      post({ type: 'failed', target: graph.target, reason: reasonOf(err) })
    }
  }
  post({ type: 'done' })
}

main().then(
  () => port.close(),
  (err: unknown) => {
    post({ type: 'fatal', message: reasonOf(err) })
    port.close()
  }
)
