/**
 * @file The hand-off cost between two device workers, measured the way the runtime hands tensors over:
 * the sender copies the tensor into shared memory and wakes the receiver with Atomics.notify; the
 * receiver (blocked in Atomics.wait) copies it out into its own buffer (onnxruntime-node rejects
 * SharedArrayBuffer-backed tensors). Two threads ping-pong a buffer of each size; a hop is half a round
 * trip. fixedMs = the hop with no payload (wake-up + sync), msPerMiB = the extra per MiB at the largest
 * size. Every device is a thread of this process, so one thread pair stands for every device pair.
 */
import type { Worker } from 'node:worker_threads'
import { startWorkerThread, workerEntryUrl } from '../worker-thread'

/** Payload sizes timed (bytes): none (the wake-up alone), a decode-sized and a prefill-sized activation. */
export const LINK_SIZES_BYTES: readonly number[] = Object.freeze([0, 256 * 1024, 4 * 1024 * 1024])
/** Timed round trips per size (small payloads are µs each, so take many). */
const LINK_REPS: readonly number[] = [400, 100, 30]
/** Untimed round trips first, per size. */
const LINK_WARMUP = 10
/** How long either side waits for the other mid-measurement before giving up (a dead peer must not hang us), ms. */
export const LINK_WAIT_TIMEOUT_MS = 5000
/** How long either side waits for the other thread to start (module loading on a busy machine), ms. */
export const LINK_START_TIMEOUT_MS = 60_000
/** Largest payload a link worker accepts (bytes). */
export const MAX_LINK_BYTES = 64 * 1024 * 1024

const MIB = 2 ** 20

/** Control words (Int32 indices) shared by the two sides. */
const PING = 0 // sequence number the sender published
const PONG = 1 // sequence number the receiver echoed
const SIZE = 2 // payload bytes of the current round, −1 = stop
const READY = 3 // 1 once the receiver waits

/** A link worker's workerData. */
export interface LinkWorkerInit {
  readonly role: 'ping' | 'pong'
  readonly control: SharedArrayBuffer
  readonly data: SharedArrayBuffer
}

/** One timed size: median one-way hop, ms. */
export interface LinkSample {
  readonly bytes: number
  readonly hopMs: number
}

/** The fitted hand-off cost and the samples it came from. */
export interface LinkMeasurement {
  readonly fixedMs: number
  readonly msPerMiB: number
  readonly samples: readonly LinkSample[]
}

/** Validates a link worker's workerData. */
export function parseLinkWorkerInit(v: unknown): LinkWorkerInit {
  if (typeof v !== 'object' || v === null) throw new TypeError('link worker init data must be an object')
  const role = 'role' in v ? v.role : undefined
  const control = 'control' in v ? v.control : undefined
  const data = 'data' in v ? v.data : undefined
  if (role !== 'ping' && role !== 'pong') throw new TypeError('link worker role must be ping or pong')
  if (!(control instanceof SharedArrayBuffer) || control.byteLength < 16) throw new TypeError('link worker control must be a SharedArrayBuffer of 16 bytes')
  if (!(data instanceof SharedArrayBuffer) || data.byteLength > MAX_LINK_BYTES) throw new TypeError(`link worker data must be a SharedArrayBuffer of at most ${MAX_LINK_BYTES} bytes`)
  return { role, control, data }
}

/** Blocks until control[index] differs from `seen`; throws after `timeoutMs`. */
function waitChange(control: Int32Array, index: number, seen: number, timeoutMs = LINK_WAIT_TIMEOUT_MS): number {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const now = Atomics.load(control, index)
    if (now !== seen) return now
    const left = deadline - performance.now()
    if (left <= 0) throw new Error(`link peer did not answer within ${timeoutMs} ms`)
    Atomics.wait(control, index, seen, left)
  }
}

function median(values: number[]): number {
  values.sort((a, b) => a - b)
  const mid = values.length >> 1
  return values.length % 2 === 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2
}

/** The sender's side (runs in a worker): times LINK_SIZES_BYTES round trips, then tells the peer to stop. */
export function runPing(init: LinkWorkerInit): LinkSample[] {
  const control = new Int32Array(init.control)
  const shared = new Uint8Array(init.data)
  const local = new Uint8Array(init.data.byteLength)
  for (let i = 0; i < local.length; i++) local[i] = i & 0xff
  waitChange(control, READY, 0, LINK_START_TIMEOUT_MS)
  let seq = 0
  const round = (bytes: number): number => {
    const t0 = performance.now()
    shared.set(local.subarray(0, bytes))
    Atomics.store(control, SIZE, bytes)
    Atomics.store(control, PING, ++seq)
    Atomics.notify(control, PING)
    // the receiver only ever echoes the latest sequence number
    waitChange(control, PONG, seq - 1)
    local.set(shared.subarray(0, bytes))
    return (performance.now() - t0) / 2
  }
  const samples: LinkSample[] = []
  LINK_SIZES_BYTES.forEach((bytes, i) => {
    if (bytes > shared.length) return
    for (let r = 0; r < LINK_WARMUP; r++) round(bytes)
    const hops: number[] = []
    for (let r = 0; r < LINK_REPS[i]; r++) hops.push(round(bytes))
    samples.push({ bytes, hopMs: median(hops) })
  })
  Atomics.store(control, SIZE, -1)
  Atomics.store(control, PING, ++seq)
  Atomics.notify(control, PING)
  return samples
}

/** The receiver's side (runs in a worker): copies each payload out and back until told to stop. */
export function runPong(init: LinkWorkerInit): void {
  const control = new Int32Array(init.control)
  const shared = new Uint8Array(init.data)
  const local = new Uint8Array(init.data.byteLength)
  Atomics.store(control, READY, 1)
  Atomics.notify(control, READY)
  let seen = waitChange(control, PING, 0, LINK_START_TIMEOUT_MS)
  for (;;) {
    const bytes = Atomics.load(control, SIZE)
    if (bytes < 0) return
    local.set(shared.subarray(0, bytes))
    shared.set(local.subarray(0, bytes))
    Atomics.store(control, PONG, seen)
    Atomics.notify(control, PONG)
    seen = waitChange(control, PING, seen)
  }
}

/** Reads the ping worker's result message. */
function parseSamples(v: unknown): LinkSample[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > LINK_SIZES_BYTES.length) throw new TypeError('link result must be a non-empty array of samples')
  return v.map((s: unknown) => {
    const bytes = typeof s === 'object' && s !== null && 'bytes' in s ? s.bytes : undefined
    const hopMs = typeof s === 'object' && s !== null && 'hopMs' in s ? s.hopMs : undefined
    if (typeof bytes !== 'number' || !LINK_SIZES_BYTES.includes(bytes)) throw new TypeError('link sample bytes must be one of the sizes sent')
    if (typeof hopMs !== 'number' || !Number.isFinite(hopMs) || hopMs < 0) throw new TypeError('link sample hopMs must be a finite non-negative number')
    return { bytes, hopMs }
  })
}

/** fixedMs from the empty hop, msPerMiB from the largest payload's extra time. */
export function fitLink(samples: readonly LinkSample[]): { fixedMs: number; msPerMiB: number } {
  const empty = samples.find((s) => s.bytes === 0) ?? samples[0]
  const largest = samples.reduce((a, b) => (b.bytes > a.bytes ? b : a))
  const msPerMiB = largest.bytes > empty.bytes ? Math.max(0, largest.hopMs - empty.hopMs) / ((largest.bytes - empty.bytes) / MIB) : 0
  return { fixedMs: empty.hopMs, msPerMiB }
}

/** Resolves with the worker's first message, rejects on its error or an exit before one; `abort` terminates it. */
function firstMessage(worker: Worker, signal: AbortSignal | undefined): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      reject(signal?.reason instanceof Error ? signal.reason : new Error('link measurement aborted'))
      void worker.terminate()
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    worker.once('message', (m: unknown) => {
      signal?.removeEventListener('abort', onAbort)
      resolve(m)
    })
    worker.once('error', (err) => {
      signal?.removeEventListener('abort', onAbort)
      reject(err)
    })
    worker.once('exit', (code) => {
      signal?.removeEventListener('abort', onAbort)
      reject(new Error(`link worker exited (code ${code}) before reporting`))
    })
  })
}

/** Measures the worker-to-worker hand-off cost with two fresh threads; both are ended before it returns. */
export async function measureLink(signal?: AbortSignal): Promise<LinkMeasurement> {
  signal?.throwIfAborted()
  const control = new SharedArrayBuffer(16)
  const data = new SharedArrayBuffer(Math.max(...LINK_SIZES_BYTES))
  const entry = workerEntryUrl(import.meta.url, 'profile-link-worker')
  const pong = startWorkerThread(entry, { role: 'pong', control, data } satisfies LinkWorkerInit)
  const ping = startWorkerThread(entry, { role: 'ping', control, data } satisfies LinkWorkerInit)
  try {
    const [result] = await Promise.all([firstMessage(ping, signal), firstMessage(pong, signal)])
    const samples = parseSamples(result)
    return { ...fitLink(samples), samples }
  } finally {
    await Promise.all([ping.terminate(), pong.terminate()])
  }
}
