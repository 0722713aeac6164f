/**
 * @file A plain memory read loop, the second bandwidth probe beside ORT's ReduceSum (limits.ts): each of
 * `threads` worker threads scans its own buffer for a byte it does not hold (Buffer.indexOf of a number
 * is libc memchr, which glibc runs with its widest vector loads), all threads at once. A JS loop would
 * measure the JIT's arithmetic, not the memory; memchr does no work per byte beyond the compare.
 */
import { Worker } from 'node:worker_threads'

/** Worker body (plain JS, so it runs without the TypeScript loader): fill once, then scan on each 'go'. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const buf = Buffer.alloc(workerData.bytes, 0)
parentPort.on('message', (m) => {
  if (m === 'exit') { parentPort.close(); return }
  const found = buf.indexOf(1)
  parentPort.postMessage(found)
})
parentPort.postMessage('ready')
`

/** One message from a worker (the first is 'ready', then one scan result per 'go'). */
function next(worker: Worker): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error): void => reject(e)
    worker.once('error', onError)
    worker.once('message', (m: unknown) => {
      worker.off('error', onError)
      resolve(m)
    })
  })
}

/** GB/s (1e9 bytes) of `reps` timed scans after one warm-up, `totalBytes` split over `threads` buffers. */
export async function measureReadLoop(totalBytes: number, threads: number, reps: number): Promise<number[]> {
  const bytes = Math.floor(totalBytes / threads)
  const workers = Array.from({ length: threads }, () => new Worker(WORKER_SOURCE, { eval: true, workerData: { bytes } }))
  try {
    await Promise.all(workers.map(next)) // 'ready': the buffers are allocated and zero-filled (pages touched)
    const scan = async (): Promise<number> => {
      const t0 = performance.now()
      const replies = workers.map(next)
      for (const w of workers) w.postMessage('go')
      for (const r of await Promise.all(replies)) if (r !== -1) throw new Error(`read loop found its sentinel at ${String(r)}`)
      return performance.now() - t0
    }
    await scan()
    const out: number[] = []
    for (let i = 0; i < reps; i++) out.push((bytes * threads) / ((await scan()) / 1000) / 1e9)
    return out
  } finally {
    for (const w of workers) w.postMessage('exit')
    await Promise.all(workers.map((w) => w.terminate()))
  }
}
