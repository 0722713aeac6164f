/**
 * @file The per-task hand-off between the coordinator and one device worker, without postMessage: a
 * control block of Int32 slots in a SharedArrayBuffer. The coordinator writes an op code and its integer
 * arguments, bumps the command sequence number and wakes the worker (Atomics.notify); the worker, blocked
 * in Atomics.wait, runs the command, writes a status and bumps the done sequence number; the coordinator
 * awaits that with Atomics.waitAsync, so its thread's event loop stays free. One command is in flight per
 * worker. Larger payloads (setup: graphs, program tables; a command's reply; error details) travel on a
 * MessagePort that the receiving side reads synchronously with receiveMessageOnPort when the control block
 * says so: a payload is posted before the command that reads it, a reply or error before the status.
 *
 *   slot 0 command seq · 1 done seq · 2 status · 3 op code · 4..11 args
 */
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads'
import { isRecord } from '../../../common/reader'

const CMD_SEQ = 0
const DONE_SEQ = 1
const STATUS = 2
const OP_CODE = 3
const ARGS = 4
/** Integer arguments one command may carry. */
export const MAX_COMMAND_ARGS = 8
/** Int32 slots in a control block. */
const CONTROL_INTS = ARGS + MAX_COMMAND_ARGS

/** The command finished normally. */
const STATUS_OK = 0
/** The command threw; the worker posted `{ type: 'error', name, message }` on the port first. */
const STATUS_ERROR = 1
/** The worker is gone (set by the coordinator when the worker exits, to wake a pending call). */
const STATUS_DEAD = 2

/** A new, zeroed control block. */
export function createControlBuffer(): SharedArrayBuffer {
  return new SharedArrayBuffer(CONTROL_INTS * 4)
}

/** Checks a control block received across the worker boundary. */
export function isControlBuffer(v: unknown): v is SharedArrayBuffer {
  return v instanceof SharedArrayBuffer && v.byteLength === CONTROL_INTS * 4
}

/** Atomics.waitAsync's result (ES2024; Node 20 has it, our TypeScript lib level does not declare it). */
type WaitAsyncResult = { readonly async: false; readonly value: string } | { readonly async: true; readonly value: Promise<string> }
type WaitAsync = (view: Int32Array, index: number, value: number) => WaitAsyncResult

function isWaitAsync(f: unknown): f is WaitAsync {
  return typeof f === 'function'
}

const atomicsWaitAsync: unknown = Reflect.get(Atomics, 'waitAsync')

/** Resolves once view[index] is no longer `value`, without blocking the thread. */
async function changed(view: Int32Array, index: number, value: number): Promise<void> {
  if (!isWaitAsync(atomicsWaitAsync)) throw new Error('Atomics.waitAsync is not available (needs Node ≥ 16)')
  while (Atomics.load(view, index) === value) {
    const r = atomicsWaitAsync(view, index, value)
    if (r.async) await r.value
  }
}

/** An error as the worker reports it on the port. */
export interface ReportedError {
  readonly name: string
  readonly message: string
}

function readReportedError(port: MessagePort): ReportedError | null {
  const m = receiveMessageOnPort(port)
  if (m === undefined) return null
  const v: unknown = m.message
  if (!isRecord(v) || v.type !== 'error' || typeof v.name !== 'string' || typeof v.message !== 'string') return null
  return { name: v.name, message: v.message }
}

/** Wraps a reply so it cannot be mistaken for an error report. */
interface Reply {
  readonly type: 'reply'
  readonly value: unknown
}

/** Coordinator side of one control block: one command at a time, awaited without blocking. */
export class CommandChannel {
  private readonly control: Int32Array
  private busy = false
  private dead: Error | null = null

  constructor(
    buffer: SharedArrayBuffer,
    private readonly port: MessagePort
  ) {
    if (!isControlBuffer(buffer)) throw new RangeError('not a control block')
    this.control = new Int32Array(buffer)
  }

  /** Sends `op` like `call` and resolves with the value the worker's handler replied with (see `reply`). */
  async callForReply(op: number, args: readonly number[] = []): Promise<unknown> {
    await this.call(op, args)
    const m = receiveMessageOnPort(this.port)
    const v: unknown = m?.message
    if (!isRecord(v) || v.type !== 'reply') throw new Error('device worker finished the command without a reply')
    return v.value
  }

  /** Sends `op` with up to MAX_COMMAND_ARGS integer args; resolves when done, rejects with the worker's error. */
  async call(op: number, args: readonly number[] = []): Promise<void> {
    if (this.dead) throw this.dead
    if (this.busy) throw new Error('a command is already in flight on this channel')
    if (args.length > MAX_COMMAND_ARGS) throw new RangeError(`at most ${MAX_COMMAND_ARGS} command args, got ${args.length}`)
    this.busy = true
    try {
      const c = this.control
      c[OP_CODE] = op
      for (let i = 0; i < args.length; i++) c[ARGS + i] = args[i]
      const seq = (c[CMD_SEQ] + 1) | 0
      const done = Atomics.load(c, DONE_SEQ)
      // the store publishes op and args (Atomics are sequentially consistent) before the worker wakes
      Atomics.store(c, CMD_SEQ, seq)
      Atomics.notify(c, CMD_SEQ)
      await changed(c, DONE_SEQ, done)
      const status = Atomics.load(c, STATUS)
      if (status === STATUS_OK) return
      if (status === STATUS_DEAD || this.dead) throw this.dead ?? new Error('device worker is gone')
      const reported = readReportedError(this.port)
      const err = new Error(reported?.message ?? 'device worker reported an error without details')
      if (reported && reported.name !== 'Error') Object.defineProperty(err, 'name', { value: reported.name })
      throw err
    } finally {
      this.busy = false
    }
  }

  /** Posts a setup payload on the port; the worker reads it when told to by a command. */
  post(message: unknown, transfer: ArrayBuffer[] = []): void {
    this.port.postMessage(message, transfer)
  }

  /** The worker is gone: a pending call rejects with `err`, and so does every later one. */
  fail(err: Error): void {
    if (this.dead) return
    this.dead = err
    const c = this.control
    Atomics.store(c, STATUS, STATUS_DEAD)
    Atomics.store(c, DONE_SEQ, (Atomics.load(c, DONE_SEQ) + 1) | 0)
    Atomics.notify(c, DONE_SEQ)
  }

  /** The error that ended the channel, if any. */
  get failure(): Error | null {
    return this.dead
  }
}

/** What a worker's command handler sees: the op and a view of its args. */
export type CommandHandler = (op: number, args: Int32Array) => Promise<boolean> | boolean

/** Worker side: posts the reply of the command being handled (read by the coordinator's `callForReply`); `transfer` moves buffers. */
export function reply(port: MessagePort, value: unknown, transfer: ArrayBuffer[] = []): void {
  const message: Reply = { type: 'reply', value }
  port.postMessage(message, transfer)
}

/**
 * Worker side: blocks in Atomics.wait for each command, runs `handle` (which may await: onnxruntime-node
 * resolves run() from setImmediate), reports the status, and loops until `handle` returns false. An
 * error is posted on `port` as `{ type: 'error', name, message }` before the status says so.
 */
export async function serveCommands(buffer: SharedArrayBuffer, port: MessagePort, handle: CommandHandler): Promise<void> {
  if (!isControlBuffer(buffer)) throw new RangeError('not a control block')
  const c = new Int32Array(buffer)
  const args = c.subarray(ARGS, ARGS + MAX_COMMAND_ARGS)
  // the last finished command: a command posted before this worker got here is still pending
  let seen = Atomics.load(c, DONE_SEQ)
  for (;;) {
    while (Atomics.load(c, CMD_SEQ) === seen) Atomics.wait(c, CMD_SEQ, seen)
    seen = Atomics.load(c, CMD_SEQ)
    let keepGoing = true
    let status = STATUS_OK
    try {
      keepGoing = await handle(c[OP_CODE], args)
    } catch (err) {
      const e = err instanceof Error ? err : new Error(String(err))
      port.postMessage({ type: 'error', name: e.name, message: e.message })
      status = STATUS_ERROR
    }
    Atomics.store(c, STATUS, status)
    Atomics.store(c, DONE_SEQ, seen)
    Atomics.notify(c, DONE_SEQ)
    if (!keepGoing) return
  }
}
