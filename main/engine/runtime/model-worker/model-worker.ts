/**
 * @file Model worker entry: loads the model, then either compiles its graph (or reuses the cached one) and
 * opens the single CPU session (no placement, or one that puts everything on one CPU device: the fast
 * path, SingleSessionEngine), or starts the heterogeneous runtime for the placement (DeviceWorkersEngine: one device
 * worker per device, coordinated from here). Serves forward / truncate / dispose requests one at a time.
 * onnxruntime-node's run() blocks its thread, which is why this lives in a worker: the caller's thread
 * stays responsive. Busy time goes to the runner's shared usage board, read by the caller at will.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { weightInfoOf, parsePlacement } from '../../plan'
import { DeviceWorkersEngine } from '../hetero/device-workers-engine'
import { singleCpuDevice } from '../hetero/device-setup'
import { openCachedGraph, resolveContext, type CompileInfo } from '../session/open-cached-graph'
import { loadModel } from '../../model'
import { SingleSessionEngine } from '../session/single-session-engine'
import { parseWorkerInit, parseWorkerRequest, requestIdOf, toWireError, type WorkerRequest, type WorkerResponse } from './protocol'
import { UsageBoard } from '../usage'

const port = parentPort
if (!port) throw new Error('model-worker.ts must run as a worker thread')

function post(message: WorkerResponse, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer)
}

/** What both engines offer the request loop. */
interface Engine {
  forward(tokens: readonly number[], pos: number): Promise<Float32Array>
  truncate(pos: number): void
  dispose(): Promise<void>
}

async function start(): Promise<Engine> {
  const init = parseWorkerInit(workerData)
  const model = await loadModel(init.modelPath, { tokenizerPath: init.tokenizerPath })
  if (!model.weights) throw new Error(`${init.modelPath}: loaded without weights`)
  const c = model.config
  const { contextLength, ropeTableLength } = resolveContext(c, init.maxContext)
  const compilable = { config: c, weights: model.weights }
  const board = new UsageBoard(init.usage)
  let placement = null
  let devices = null
  if (init.placement !== undefined) {
    if (init.devices === undefined) throw new Error('a placement needs the device list it was made for (ModelWorkerOptions.devices)')
    devices = init.devices
    placement = parsePlacement(init.placement, c, devices, weightInfoOf(model.weights))
  }
  const fastDevice = placement === null || devices === null ? 'cpu' : singleCpuDevice(placement, c, devices)
  if (fastDevice !== null || placement === null || devices === null) {
    const { session, info } = await openCachedGraph(compilable, { cacheDir: init.cacheDir, threads: init.threads, graph: { ropeTableLength } })
    const engine = new SingleSessionEngine(compilable, session, { contextLength, prefillChunk: placement?.prefillChunkTokens, usage: { board, slot: 0 } })
    post({ type: 'ready', config: c, contextLength, compileInfo: info, usageDevices: [fastDevice ?? 'cpu'] })
    return engine
  }
  const engine = await DeviceWorkersEngine.create(compilable, placement, { contextLength, devices, threads: init.threads, graph: { ropeTableLength }, usage: board })
  const s = engine.setupInfo
  const compileInfo: CompileInfo = {
    cacheHit: false,
    compileMs: s.compileMs,
    sessionMs: Math.max(0, s.setupMs - s.compileMs),
    graphPath: `(${s.graphs} graphs in memory on ${engine.deviceIds.join(', ')})`
  }
  post({ type: 'ready', config: c, contextLength, compileInfo, usageDevices: engine.deviceIds })
  return engine
}

async function handle(engine: Engine, request: WorkerRequest): Promise<boolean> {
  switch (request.type) {
    case 'forward': {
      const logits = await engine.forward(request.tokens, request.pos)
      const buffer = logits.buffer
      if (!(buffer instanceof ArrayBuffer)) throw new Error('logits are not in a transferable buffer')
      post({ type: 'logits', id: request.id, logits }, [buffer])
      return true
    }
    case 'truncate':
      engine.truncate(request.pos)
      post({ type: 'done', id: request.id })
      return true
    case 'dispose':
      await engine.dispose()
      post({ type: 'done', id: request.id })
      return false
  }
}

start().then(
  (engine) => {
    // requests run strictly in arrival order; a failed one reports its error and the queue continues
    let queue = Promise.resolve(true)
    port.on('message', (raw: unknown) => {
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
          const keepGoing = await handle(engine, request)
          if (!keepGoing) port.close()
          return keepGoing
        } catch (err) {
          post({ type: 'error', id: request.id, error: toWireError(err) })
          return true
        }
      })
    })
  },
  (err: unknown) => {
    post({ type: 'init-error', error: toWireError(err) })
    port.close()
  }
)
