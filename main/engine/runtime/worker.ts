/**
 * @file Model worker entry: loads the model, compiles its graph (or reuses the cached one), opens the
 * CPU session and serves forward / truncate / dispose requests one at a time. onnxruntime-node's run()
 * blocks its thread, which is why this lives in a worker: the caller's thread stays responsive.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { openModelGraph, resolveContext } from './load-graph'
import { loadModel } from '../model'
import { ModelEngine } from './model-engine'
import { parseWorkerInit, parseWorkerRequest, requestIdOf, toWireError, type WorkerRequest, type WorkerResponse } from './protocol'

const port = parentPort
if (!port) throw new Error('worker.ts must run as a worker thread')

function post(message: WorkerResponse, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(message, transfer)
}

async function start(): Promise<ModelEngine> {
  const init = parseWorkerInit(workerData)
  const model = await loadModel(init.modelPath, { tokenizerPath: init.tokenizerPath })
  if (!model.weights) throw new Error(`${init.modelPath}: loaded without weights`)
  const c = model.config
  const { contextLength, ropeTableLength } = resolveContext(c, init.maxContext)
  const compilable = { config: c, weights: model.weights }
  const { session, info } = await openModelGraph(compilable, { cacheDir: init.cacheDir, threads: init.threads, graph: { ropeTableLength } })
  const engine = new ModelEngine(compilable, session, { contextLength })
  post({ type: 'ready', config: c, contextLength, compileInfo: info })
  return engine
}

async function handle(engine: ModelEngine, request: WorkerRequest): Promise<boolean> {
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
