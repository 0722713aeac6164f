/**
 * @file The search worker's entry: a thread with its own read-only connection to the database file, so a
 * search (however much text it ranks and cuts) never holds up the main thread — its calls, its IPC, the
 * reply streams. WAL lets this reader run beside the main connection's writes; it sees what was committed
 * when each search starts. Requests are answered one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads'
import Database from 'better-sqlite3'
import { BUSY_TIMEOUT_MS } from './database'
import { SearchIndex } from './search'
import { readRequest, readWorkerData, type SearchResponse } from './search-protocol'

const port = parentPort
if (port === null) throw new Error('search-worker.ts runs as a worker thread (see search-worker-client.ts)')
const { file } = readWorkerData(workerData)
// fileMustExist: the main connection created and migrated the file; this one never writes to it.
const db = new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS })
db.pragma('query_only = ON')
const index = new SearchIndex(db)

port.on('message', (raw: unknown) => {
  const request = readRequest(raw)
  if (request.type === 'close') {
    db.close()
    port.close()
    return
  }
  let response: SearchResponse
  try {
    response = { id: request.id, hits: index.search(request.query, request.limit) }
  } catch (err) {
    response = { id: request.id, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }
  }
  port.postMessage(response)
})
