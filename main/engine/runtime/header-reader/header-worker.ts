/**
 * @file Worker entry: reads model headers (`loadModel(path, { weights: false })`) one request at a time, so
 * the parsing of a large header or tokenizer never runs on the app's main thread.
 */
import { parentPort } from 'node:worker_threads'
import { loadModel } from '../../model'
import { readRequest, type HeaderResponse } from './protocol'

const port = parentPort
if (port === null) throw new Error('header-worker.ts runs as a worker thread')

port.on('message', (message: unknown) => {
  void answer(message).then((response) => port.postMessage(response))
})

async function answer(message: unknown): Promise<HeaderResponse> {
  const { id, path } = readRequest(message)
  try {
    const m = await loadModel(path, { weights: false })
    return { id, facts: { config: m.config, quantization: m.quantization, tensorTypes: [...m.tensorTypes], hasChatTemplate: m.chatTemplate !== null } }
  } catch (err) {
    return { id, error: err instanceof Error ? err.message : String(err) }
  }
}
