/**
 * @file Link-measurement worker entry (see profile-link.ts): the 'ping' side times round trips and posts
 * its samples; the 'pong' side echoes until told to stop, then posts 'done'. Imports nothing heavy, so it
 * starts fast.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { parseLinkWorkerInit, runPing, runPong } from './profile-link'

const port = parentPort
if (!port) throw new Error('profile-link-worker.ts must run as a worker thread')

const init = parseLinkWorkerInit(workerData)
if (init.role === 'ping') port.postMessage(runPing(init))
else {
  runPong(init)
  port.postMessage('done')
}
port.close()
