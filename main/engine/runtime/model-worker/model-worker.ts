/**
 * @file Model worker entry: reads the weights where the caller's header parse says they are, then, as
 * chooseEngine decides, either opens the single CPU session on the model's graph (compiled, or reused from
 * the cache: SingleSessionEngine) or starts the device workers of the placement (DeviceWorkersEngine, one
 * worker per device, coordinated from here). Serves forward / truncate / dispose requests one at a time.
 * onnxruntime-node's run() blocks its thread, which is why this lives in a worker: the caller's thread
 * stays responsive. Busy time goes to the client's shared usage board, read by the caller at will.
 */
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { parentPort, workerData } from 'node:worker_threads'
import { readWeights, type ModelConfig } from '../../model'
import { modelFingerprint } from '../../graph'
import { defaultPrefillChunkTokens, maxPrefillChunkTokens, parsePlacement, weightInfoOf } from '../../plan'
import { chooseEngine } from '../engine-choice'
import type { LoadProgress } from '../load-progress'
import type { ForwardEngine } from '../forward'
import { DeviceWorkersEngine } from '../hetero/device-workers-engine'
import { resolveContext } from '../context'
import { openCachedGraph, verifyCachedGraph, type CompileInfo, type GraphVerification } from '../session/open-cached-graph'
import { SingleSessionEngine } from '../session/single-session-engine'
import { UsageBoard } from '../usage'
import { loadW8A8, type W8A8EngineOptions } from '../w8a8-setup'
import { parseWorkerInit, parseWorkerRequest, requestIdOf, toWireError, type WorkerInit, type WorkerRequest, type WorkerResponse } from './protocol'

const port = parentPort
if (!port) throw new Error('model-worker.ts must run as a worker thread')

function post(message: WorkerResponse, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer)
}

/** The chunk of a run without a placement: the caller's, checked like a placement's, else the one default. */
function prefillChunkOf(config: ModelConfig, tokens: number | undefined): number {
  if (tokens === undefined) return defaultPrefillChunkTokens(config)
  const max = maxPrefillChunkTokens(config)
  if (!Number.isInteger(tokens) || tokens < 1 || tokens > max) throw new RangeError(`prefillChunkTokens must be an integer in [1, ${max}] for this model, got ${tokens}`)
  return tokens
}

/** Progress to the client: every stage change, and within a stage at most every PROGRESS_INTERVAL_MS. */
const PROGRESS_INTERVAL_MS = 100
let lastProgress: { stage: string; at: number } | null = null
function postProgress(progress: LoadProgress): void {
  const now = performance.now()
  const last = lastProgress
  const finished = progress.total > 0 && progress.done === progress.total
  if (last !== null && last.stage === progress.stage && now - last.at < PROGRESS_INTERVAL_MS && !finished) return
  lastProgress = { stage: progress.stage, at: now }
  post({ type: 'progress', progress })
}

/** Requests being handled, and when the last one ended: background work (the cache check) waits for a quiet spell. */
let inFlight = 0
let lastActivity = 0
/** How long the worker must have been without requests before background work takes a step. */
const IDLE_BEFORE_BACKGROUND_MS = 300

/** Resolves once no request has run for IDLE_BEFORE_BACKGROUND_MS (a reply's decode steps keep it waiting). */
async function whenIdle(): Promise<void> {
  for (;;) {
    const quietFor = performance.now() - lastActivity
    if (inFlight === 0 && quietFor >= IDLE_BEFORE_BACKGROUND_MS) return
    await sleep(Math.max(20, IDLE_BEFORE_BACKGROUND_MS - quietFor))
  }
}

/**
 * The KV source of device workers: a hash of the placement (which device runs what, the chunking) and of the W8A8
 * calibration applied, since either changes the cached values.
 */
function deviceWorkersKvSource(init: WorkerInit, w8a8: W8A8EngineOptions | null): string {
  return `device workers ${createHash('sha256').update(JSON.stringify({ placement: init.placement, w8a8 })).digest('hex')}`
}

async function start(init: WorkerInit): Promise<ForwardEngine> {
  // the caller parsed the header; only the weights are read here
  const weights = readWeights(init.layout)
  const c = init.config
  const { contextLength, ropeTableLength } = resolveContext(c, init.maxContext)
  const compilable = { config: c, weights }
  const board = new UsageBoard(init.usage)
  const placement = init.placement === undefined ? null : parsePlacement(init.placement, c, init.devices ?? [], weightInfoOf(weights))
  const choice = placement === null ? null : chooseEngine(placement, c, init.devices ?? [])
  // W8A8 applies to the placement's NPU segments (the single CPU session has none); the calibration is checked either way
  const w8a8 = init.w8a8 === undefined ? null : await loadW8A8(compilable, init.cacheDir, init.w8a8)
  if (placement === null || choice?.kind === 'single-session') {
    const { session, info } = await openCachedGraph(compilable, { cacheDir: init.cacheDir, threads: init.threads, graph: { ropeTableLength }, onProgress: postProgress })
    const prefillChunkTokens = placement?.prefillChunkTokens ?? prefillChunkOf(c, init.prefillChunkTokens)
    const engine = new SingleSessionEngine(compilable, session, { contextLength, prefillChunkTokens, usage: { board, slot: 0 } })
    const device = choice?.kind === 'single-session' ? choice.device.id : 'cpu'
    post({ type: 'ready', contextLength, compileInfo: info, usageDevices: [device], kvSource: `single session on ${device}`, fingerprint: modelFingerprint(compilable) })
    // a compile hashed these very bytes; a cache hit trusted a sample of them, so check them all now, between requests
    const check = info.cacheHit ? verifyCachedGraph(compilable, info.graphPath, whenIdle) : Promise.resolve<GraphVerification>('verified')
    void check.then(
      (result) => post({ type: 'verification', result }),
      () => post({ type: 'verification', result: 'unchecked' })
    )
    return engine
  }
  const graph = { ropeTableLength, w8a8: w8a8?.scales ?? null }
  const engine = await DeviceWorkersEngine.create(compilable, placement, { contextLength, devices: init.devices ?? [], threads: init.threads, graph, cacheDir: init.cacheDir, usage: board, onProgress: postProgress, shadow: w8a8?.shadow ?? null })
  const s = engine.setupInfo
  const compileInfo: CompileInfo = {
    cacheHit: s.cacheHits === s.graphs,
    compileMs: s.compileMs,
    sessionMs: Math.max(0, s.setupMs - s.compileMs),
    graphPath: `${s.cacheDir} (${s.graphs} graphs on ${engine.deviceIds.join(', ')}, ${s.cacheHits} from the cache)`
  }
  post({ type: 'ready', contextLength, compileInfo, usageDevices: engine.deviceIds, kvSource: deviceWorkersKvSource(init, w8a8), fingerprint: modelFingerprint(compilable) })
  // device segments record no content hash (their fingerprint key alone decides)
  post({ type: 'verification', result: 'unchecked' })
  return engine
}

async function handle(engine: ForwardEngine, request: WorkerRequest, cancel: Int32Array): Promise<boolean> {
  switch (request.type) {
    case 'forward': {
      // the client writes a forward's id into the cancel word to stop it between prefill chunks
      const logits = await engine.forward(request.tokens, request.pos, () => Atomics.load(cancel, 0) === request.id)
      const buffer = logits.buffer
      if (!(buffer instanceof ArrayBuffer)) throw new Error('logits are not in a transferable buffer')
      post({ type: 'logits', id: request.id, logits }, [buffer])
      return true
    }
    case 'truncate':
      engine.truncate(request.pos)
      post({ type: 'done', id: request.id })
      return true
    case 'kv-read': {
      const data = await engine.readKv(request.start, request.count, request.format)
      const buffer = data.buffer
      if (!(buffer instanceof ArrayBuffer)) throw new Error('KV bytes are not in a transferable buffer')
      post({ type: 'kv', id: request.id, data }, [buffer])
      return true
    }
    case 'kv-write':
      await engine.writeKv(request.start, request.count, request.format, request.data, request.reserve)
      post({ type: 'done', id: request.id })
      return true
    case 'dispose':
      await engine.dispose()
      post({ type: 'done', id: request.id })
      return false
  }
}

const starting = Promise.resolve().then(() => parseWorkerInit(workerData))
starting.then(async (init) => ({ engine: await start(init), cancel: new Int32Array(init.cancel) })).then(
  ({ engine, cancel }) => {
    // requests run strictly in arrival order; a failed one reports its error and the queue continues
    let queue = Promise.resolve(true)
    port.on('message', (raw: unknown) => {
      inFlight++
      queue = queue.then(async (alive) => {
        if (!alive) return false
        let request: WorkerRequest
        try {
          request = parseWorkerRequest(raw)
        } catch (err) {
          post({ type: 'error', id: requestIdOf(raw), error: toWireError(err) })
          return true
        }
        try {
          const keepGoing = await handle(engine, request, cancel)
          if (!keepGoing) port.close()
          return keepGoing
        } catch (err) {
          post({ type: 'error', id: request.id, error: toWireError(err) })
          return true
        }
      })
      void queue.finally(() => {
        inFlight--
        lastActivity = performance.now()
      })
    })
  },
  (err: unknown) => {
    post({ type: 'init-error', error: toWireError(err) })
    port.close()
  }
)
