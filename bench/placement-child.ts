/**
 * @file Entry of a placement child (forked by bench/placement-handle.ts with `--import tsx`; argv[2] is the
 * JSON init): opens the model with one placement through the engine's public runner (`openModelWorker` with
 * `placement` and `devices`: the single CPU session when everything is on one CPU device, else one worker
 * per device), then answers timed prefill / decode requests with greedy argmax in JS, reporting each
 * device's busy time during the call, until told to exit.
 */
import { loadModel } from '../main/engine/model'
import { parsePlacement, weightInfoOfTypes } from '../main/engine/plan'
import { openModelWorker, usageDelta, type ModelWorkerClient } from '../main/engine/runtime'
import { failWith } from '../main/common/reader'
import { readDeviceList } from '../main/engine/devices'
import { argmax } from './peer-tandem'
import { parsePlacementChildInit, parsePlacementRequest, type PlacementChildInit, type PlacementMessage, type PlacementRequest } from './placement-protocol'

/** How long an orphaned child may take to release its runner before it exits anyway. */
const ORPHAN_EXIT_MS = 5000

function send(message: PlacementMessage): Promise<void> {
  return new Promise((resolve, reject) => {
    if (!process.send) {
      reject(new Error('placement child started without an IPC channel (run it through bench/run.ts)'))
      return
    }
    process.send(message, (err: Error | null) => (err ? reject(err) : resolve()))
  })
}

const errorMessage = (e: unknown): string => (e instanceof Error ? (e.stack ?? e.message) : String(e))

async function open(init: PlacementChildInit): Promise<ModelWorkerClient> {
  // the header once; the model worker reads the weights
  const model = await loadModel(init.modelPath, { weights: false })
  const devices = readDeviceList(failWith((m) => new Error(`placement child init: ${m}`)), 'devices', init.devices)
  const placement = parsePlacement(init.placement, model.config, devices, weightInfoOfTypes(model.tensorTypes))
  return openModelWorker(model, { placement, devices, maxContext: init.contextSize, cacheDir: init.graphCacheDir })
}

/** Runs one request; the timing covers only the forwards (the rewind before a prefill is outside it). */
async function handle(runner: ModelWorkerClient, req: Exclude<PlacementRequest, { op: 'exit' }>): Promise<PlacementMessage> {
  if (req.op === 'prefill') await runner.truncate(0)
  const before = runner.usage()
  const t0 = performance.now()
  const tokens: number[] = []
  if (req.op === 'prefill') {
    tokens.push(argmax(await runner.forward(req.tokens, 0)))
  } else {
    let token = req.first
    for (let i = 0; i < req.steps; i++) {
      token = argmax(await runner.forward([token], req.pos + i))
      tokens.push(token)
    }
  }
  const ms = performance.now() - t0
  return { type: 'result', id: req.id, ms, tokens, busy: usageDelta(before, runner.usage()) }
}

async function serve(init: PlacementChildInit): Promise<void> {
  const t0 = performance.now()
  const runner = await open(init)
  const info = runner.compileInfo
  const deviceIds = runner.usage().devices.map((d) => d.id)
  await send({ type: 'ready', loadMs: performance.now() - t0, deviceIds, setup: `${info.graphPath}; compile ${Math.round(info.compileMs)} ms, sessions ${Math.round(info.sessionMs)} ms` })
  let exiting = false
  // the parent went away without an 'exit' (crash, Ctrl-C): release the runner and leave, never linger
  process.once('disconnect', () => {
    if (exiting) return
    const timer = setTimeout(() => process.exit(1), ORPHAN_EXIT_MS)
    void runner.dispose().finally(() => {
      clearTimeout(timer)
      process.exit(1)
    })
  })
  let queue = Promise.resolve()
  process.on('message', (raw: unknown) => {
    queue = queue.then(async () => {
      let req: PlacementRequest
      try {
        req = parsePlacementRequest(raw)
      } catch (e) {
        await send({ type: 'error', id: null, message: errorMessage(e) })
        return
      }
      try {
        if (req.op === 'exit') {
          exiting = true
          await runner.dispose()
          await send({ type: 'bye', id: req.id })
          process.disconnect()
          return
        }
        await send(await handle(runner, req))
      } catch (e) {
        await send({ type: 'error', id: req.id, message: errorMessage(e) })
      }
    })
  })
}

async function main(): Promise<void> {
  try {
    await serve(parsePlacementChildInit(process.argv[2] ?? ''))
  } catch (e) {
    await send({ type: 'error', id: null, message: errorMessage(e) })
    process.disconnect()
  }
}

void main()
