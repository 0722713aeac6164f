/**
 * @file A coordinator's handle on one device worker: starts it, sends setup (graphs, programs, KV layers),
 * per-task commands and timing requests through its control block, and turns a worker crash or exit into a
 * rejection of the pending and every later command, naming the device. The engine and the profiler both
 * drive devices through it, so what the profiler measures is what the runtime runs. Pair `start` with `dispose`.
 */
import { MessageChannel, type Worker } from 'node:worker_threads'
import { WorkerExitedError } from '../errors'
import { CommandChannel, createControlBuffer } from './handoff'
import { OP, type DeviceMessage, type DeviceProgram, type DeviceWorkerInit, type KvGeometry } from './device-protocol'
import type { KvFormat } from '../kv-snapshot'
import type { TimingRequest } from './session-timing'
import type { ArenaInit, Parity } from './value-arena'
import { startWorkerThread, workerEntryUrl } from '../worker-thread'

/** How long dispose waits for the worker to exit on its own before terminating it. */
const DISPOSE_EXIT_TIMEOUT_MS = 5000

/** What a device worker is started with. */
export interface DeviceHostOptions {
  readonly deviceId: string
  readonly ep: string
  readonly threads?: number
  readonly providerOptions?: Readonly<Record<string, string>>
  readonly arena: ArenaInit
  readonly usage: SharedArrayBuffer
  readonly usageSlot: number
  readonly kv: KvGeometry
}

/** One running device worker. */
export class DeviceHost {
  private readonly exited: Promise<void>
  private disposed = false

  private constructor(
    readonly deviceId: string,
    private readonly worker: Worker,
    private readonly channel: CommandChannel
  ) {
    this.exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    worker.on('error', (err) => channel.fail(new WorkerExitedError(`device ${deviceId} worker crashed: ${err.message}`)))
    worker.on('exit', (code) => channel.fail(new WorkerExitedError(`device ${deviceId} worker exited (code ${code})`)))
  }

  /** Starts the device's worker thread (it waits for commands; nothing is loaded yet). */
  static start(options: DeviceHostOptions): DeviceHost {
    const { port1, port2 } = new MessageChannel()
    const control = createControlBuffer()
    const init: DeviceWorkerInit = { ...options, control, port: port2 }
    // the worker stays referenced: a pending Atomics.waitAsync alone does not keep an event loop alive
    const worker = startWorkerThread(workerEntryUrl(import.meta.url, 'device-worker'), init, { transferList: [port2] })
    return new DeviceHost(options.deviceId, worker, new CommandChannel(control, port1))
  }

  private async send(message: DeviceMessage, transfer: ArrayBuffer[] = []): Promise<void> {
    this.channel.post(message, transfer)
    await this.channel.call(OP.message)
  }

  /**
   * Opens a session on the device for a cached graph file, or for ONNX `bytes` (transferred: the caller's copy
   * is gone); `staticRows` for a static-shape graph (see DeviceMessage).
   */
  async loadSession(key: string, label: string, model: Uint8Array | string, staticRows: number | null = null): Promise<void> {
    if (typeof model === 'string') return this.send({ type: 'session', key, label, model, staticRows })
    const own = model.byteOffset === 0 && model.byteLength === model.buffer.byteLength && model.buffer instanceof ArrayBuffer ? model : model.slice()
    const buffer = own.buffer
    await this.send({ type: 'session', key, label, model: own, staticRows }, buffer instanceof ArrayBuffer ? [buffer] : [])
  }

  /** Releases the session `key` (nothing when there is none). */
  async releaseSession(key: string): Promise<void> {
    await this.send({ type: 'release', key })
  }

  /** Times whole runs of an opened session as `request` says; resolves to their median, ms. */
  async measure(request: TimingRequest): Promise<number> {
    this.channel.post({ type: 'measure', request } satisfies DeviceMessage)
    const ms = await this.channel.callForReply(OP.message)
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new Error(`device ${this.deviceId} replied with no run time`)
    return ms
  }

  /** Copies `floats` values of arena slot `slot` out and back in the worker (one round trip plus a hand-off's two copies). */
  echo(slot: number, floats: number): Promise<void> {
    return this.channel.call(OP.echo, [slot, floats])
  }

  /** Registers program `id`. */
  async addProgram(id: number, program: DeviceProgram): Promise<void> {
    await this.send({ type: 'program', id, program })
  }

  /** Allocates this device's KV caches for `layers`. */
  async holdLayers(layers: readonly number[]): Promise<void> {
    await this.send({ type: 'kv', layers })
  }

  /** Positions [start, start + count) of layer `layer`'s cache as snapshot bytes. */
  async readKv(layer: number, start: number, count: number, format: KvFormat): Promise<Uint8Array> {
    this.channel.post({ type: 'kv-read', layer, start, count, format } satisfies DeviceMessage)
    const data = await this.channel.callForReply(OP.message)
    if (!(data instanceof Uint8Array)) throw new Error(`device ${this.deviceId} replied to a KV read without bytes`)
    return data
  }

  /** Puts one layer's snapshot bytes at positions start.. of its cache (`data` is copied: the caller's block stays whole). */
  async writeKv(layer: number, start: number, count: number, format: KvFormat, data: Uint8Array, reserve: number): Promise<void> {
    const own = data.slice()
    await this.send({ type: 'kv-write', layer, start, count, reserve, format, data: own }, [own.buffer])
  }

  /** Runs program `id` for a chunk; resolves when its outputs are in the arena. */
  run(id: number, parity: Parity, tokens: number, pos: number): Promise<void> {
    return this.channel.call(OP.run, [id, parity, tokens, pos])
  }

  /** One empty command round trip (measures the hand-off). */
  ping(): Promise<void> {
    return this.channel.call(OP.ping)
  }

  /** Releases the sessions and ends the worker. */
  async dispose(): Promise<void> {
    if (this.disposed) return
    this.disposed = true
    if (!this.channel.failure) {
      try {
        await this.channel.call(OP.exit)
      } catch {
        // already failing: terminate below
      }
    }
    const timer = setTimeout(() => void this.worker.terminate(), DISPOSE_EXIT_TIMEOUT_MS)
    await this.exited
    clearTimeout(timer)
  }
}
