/**
 * @file ModelWorkerClient: a model running in its own worker thread (see model-worker.ts), driven by promises from
 * the calling thread. Calls are queued in order in the worker; a worker crash or exit rejects every
 * pending call and every later one with WorkerExitedError.
 */
import type { LoadProgressListener } from '../load-progress'
import type { Worker } from 'node:worker_threads'
import type { DeviceInfo } from '../../devices'
import type { Placement } from '../../plan'
import { ContextOverflowError, ForwardCancelledError, ProtocolError, WorkerExitedError } from '../errors'
import type { CompileInfo, GraphVerification } from '../session/open-cached-graph'
import { loadModel, type LoadedModel, type ModelConfig } from '../../model'
import { MAX_KV_WIRE_BYTES } from '../wire-limits'
import { MAX_FORWARD_TOKENS, parseWorkerResponse, type WireError, type WorkerInit, type WorkerRequest } from './protocol'
import type { KvFormat } from '../kv-snapshot'
import { startWorkerThread, workerEntryUrl } from '../worker-thread'
import { UsageBoard, type DeviceUsage } from '../usage'
import { checkW8A8Request, type W8A8Request } from '../w8a8-setup'

/** Options for openModelWorker. */
export interface ModelWorkerOptions {
  /** tokenizer for llama2.c checkpoints when a path is given (default: tok*.bin beside the model) */
  readonly tokenizerPath?: string
  /** compiled-graph cache folder (default: $TANDEM_CACHE_DIR, $XDG_CACHE_HOME/tandem/graphs, ~/.cache/tandem/graphs) */
  readonly cacheDir?: string
  /** ONNX Runtime intra-op threads (default: the physical cores, devices/cpu-cores.ts) */
  readonly threads?: number
  /** cap the context below the model's own (the KV cache may grow up to it); default DEFAULT_MAX_CONTEXT (context.ts) */
  readonly maxContext?: number
  /**
   * where each op group runs (default: everything in one CPU session). Everything on one CPU-EP device
   * without partitions keeps the single-session fast path; anything else starts one worker per device.
   */
  readonly placement?: Placement
  /** this machine's devices (discoverDevices); required with a placement, which the worker re-validates against them */
  readonly devices?: readonly DeviceInfo[]
  /** tokens per prefill chunk without a placement (a placement brings its own); default the planner's DEFAULT_PREFILL_CHUNK_TOKENS */
  readonly prefillChunkTokens?: number
  /** hears what the open is doing until the model is ready (compiling, reading, preparing) */
  readonly onProgress?: LoadProgressListener
  /** W8A8 layer matmuls with llm.npu's shadow (needs a placement and the model's stored calibration) */
  readonly w8a8?: W8A8Request
}

/** A model in a worker: forward tokens, get the last position's logits. */
export interface ModelWorkerClient {
  readonly config: ModelConfig
  /** positions the worker can hold: resolveContext (context.ts) of the model and maxContext */
  readonly contextLength: number
  readonly compileInfo: CompileInfo
  /**
   * Whether the cached graph was compiled from exactly these bytes, checked in the worker after it became ready
   * (verifyCachedGraph). 'stale': the file changed in a way the cache key's sample missed; the entry is removed,
   * and this model should be opened again (it compiles anew). 'unchecked' also when the worker ends first.
   */
  readonly verification: Promise<GraphVerification>
  /** the placement running (null: the default single CPU session) */
  readonly placement: Placement | null
  /** Cumulative busy time per device in use, read live (no round trip to the worker). */
  usage(): DeviceUsage
  /**
   * Runs `tokens` at positions pos.. and resolves to the logits [vocab] of the last one. `pos` must be
   * ≤ the number of cached positions; a smaller `pos` rewinds the cache to `pos` first (regenerate).
   * pos + tokens.length > contextLength rejects with ContextOverflowError. Aborting `signal` stops a long
   * prompt between prefill chunks (ForwardCancelledError; the chunks already run stay cached).
   */
  forward(tokens: readonly number[], pos: number, signal?: AbortSignal): Promise<Float32Array>
  /** Rewinds the KV cache to `pos` positions. */
  truncate(pos: number): Promise<void>
  /**
   * What the KV cache's values depend on besides the weights: the device of the single session, or a hash of the
   * placement and W8A8 calibration of device workers (a snapshot computed one way never restores into another).
   */
  readonly kvSource: string
  /** The model's fingerprint, as the graph cache keys it (config, tensor names, shapes, encodings, sampled rows). */
  readonly fingerprint: string
  /** The cached positions [start, start + count) as snapshot bytes in `format` (kv-snapshot.ts). */
  readKv(start: number, count: number, format: KvFormat): Promise<Uint8Array>
  /**
   * Puts snapshot bytes of `count` positions at positions start.. (rewinding to `start` first), making room for
   * `reserve` positions at once. `data`'s buffer is handed over to the worker when it holds nothing else.
   */
  writeKv(start: number, count: number, format: KvFormat, data: Uint8Array, reserve?: number): Promise<void>
  /** Releases the session and ends the worker. */
  dispose(): Promise<void>
}

/** How long dispose waits for the worker to exit on its own before terminating it. */
const DISPOSE_EXIT_TIMEOUT_MS = 5000

/** Starts the model worker script (model-worker.ts from source, model-worker.js built; see worker-thread.ts). Low level: openModelWorker wraps it. */
export function startModelWorkerThread(init: WorkerInit): Worker {
  return startWorkerThread(workerEntryUrl(import.meta.url, 'model-worker'), init)
}

function errorFromWire(e: WireError): Error {
  const err = e.name === 'ContextOverflowError' ? new ContextOverflowError(e.message) : e.name === 'ForwardCancelledError' ? new ForwardCancelledError(e.message) : new Error(e.message)
  if (err.name !== e.name) Object.defineProperty(err, 'name', { value: e.name })
  return err
}

/** A request before the client numbers it. */
type RequestBody =
  | { readonly type: 'forward'; readonly tokens: readonly number[]; readonly pos: number }
  | { readonly type: 'truncate'; readonly pos: number }
  | { readonly type: 'kv-read'; readonly start: number; readonly count: number; readonly format: KvFormat }
  | { readonly type: 'kv-write'; readonly start: number; readonly count: number; readonly reserve: number; readonly format: KvFormat; readonly data: Uint8Array }
  | { readonly type: 'dispose' }

/** What the worker reports once its engine is up. */
interface Ready {
  readonly contextLength: number
  readonly compileInfo: CompileInfo
  readonly usageDevices: readonly string[]
  readonly kvSource: string
  readonly fingerprint: string
}

interface Pending {
  resolve(value: Float32Array | Uint8Array | null): void
  reject(err: Error): void
}

/** What the worker needs of a model: the config and weight layout of its header (LoadedModel has both). */
export type ModelHeader = Pick<LoadedModel, 'config' | 'layout'>

/**
 * Starts a worker for a model — its header as already parsed, or a path whose header is parsed here, once —
 * and waits until its graph is compiled (or loaded) and its session open. The worker reads only the weights.
 */
export async function openModelWorker(model: string | ModelHeader, options: ModelWorkerOptions = {}): Promise<ModelWorkerClient> {
  if (options.placement !== undefined && options.devices === undefined) throw new RangeError('a placement needs the device list it was made for (options.devices)')
  if (options.w8a8 !== undefined) {
    checkW8A8Request(options.w8a8)
    if (options.placement === undefined) throw new RangeError('W8A8 runs on a placement (e.g. the npu-prefill-gpu-decode preset); none was given')
  }
  const header = typeof model === 'string' ? await loadModel(model, { tokenizerPath: options.tokenizerPath, weights: false }) : model
  const config = header.config
  const board = new UsageBoard()
  const cancel = new Int32Array(new SharedArrayBuffer(4))
  const init: WorkerInit = {
    config,
    layout: header.layout,
    cacheDir: options.cacheDir,
    threads: options.threads,
    maxContext: options.maxContext,
    placement: options.placement,
    devices: options.devices,
    prefillChunkTokens: options.prefillChunkTokens,
    w8a8: options.w8a8,
    usage: board.buffer,
    cancel: cancel.buffer
  }
  const worker = startModelWorkerThread(init)
  const pending = new Map<number, Pending>()
  let nextId = 1
  let exitError: Error | null = null
  let onReady: ((r: Ready) => void) | null = null
  let onInitError: ((err: Error) => void) | null = null

  let settleVerification: (result: GraphVerification) => void = () => {}
  const verification = new Promise<GraphVerification>((resolve) => {
    settleVerification = resolve
  })
  const failAll = (err: Error): void => {
    settleVerification('unchecked')
    if (!exitError) exitError = err
    onInitError?.(err)
    for (const p of pending.values()) p.reject(err)
    pending.clear()
  }

  worker.on('message', (raw: unknown) => {
    let msg
    try {
      msg = parseWorkerResponse(raw, config)
    } catch (err) {
      failAll(err instanceof Error ? err : new ProtocolError(String(err)))
      void worker.terminate()
      return
    }
    if (msg.type === 'ready') {
      onReady?.(msg)
      return
    }
    if (msg.type === 'init-error') {
      onInitError?.(errorFromWire(msg.error))
      return
    }
    if (msg.type === 'progress') {
      options.onProgress?.(msg.progress)
      return
    }
    if (msg.type === 'verification') {
      settleVerification(msg.result)
      return
    }
    const p = msg.id === null ? undefined : pending.get(msg.id)
    if (!p || msg.id === null) return
    pending.delete(msg.id)
    if (msg.type === 'logits') p.resolve(msg.logits)
    else if (msg.type === 'kv') p.resolve(msg.data)
    else if (msg.type === 'done') p.resolve(null)
    else p.reject(errorFromWire(msg.error))
  })
  worker.on('error', (err) => failAll(new WorkerExitedError(`model worker crashed: ${err.message}`)))
  worker.on('exit', (code) => failAll(new WorkerExitedError(`model worker exited (code ${code})`)))

  const ready = await new Promise<Ready>((resolve, reject) => {
    onReady = resolve
    onInitError = (err) => {
      reject(err)
      void worker.terminate()
    }
  })
  onInitError = null

  const call = (request: RequestBody, signal?: AbortSignal, transfer: readonly ArrayBuffer[] = []): Promise<Float32Array | Uint8Array | null> => {
    if (exitError) return Promise.reject(exitError)
    const id = nextId++
    // ids stay far below 2^31 in any session, so they fit the Int32 cancel word
    const onAbort = (): void => {
      Atomics.store(cancel, 0, id)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    return new Promise<Float32Array | Uint8Array | null>((resolve, reject) => {
      pending.set(id, { resolve, reject })
      const message: WorkerRequest = { ...request, id }
      worker.postMessage(message, [...transfer])
    }).finally(() => signal?.removeEventListener('abort', onAbort))
  }

  let disposed = false
  return {
    config,
    contextLength: ready.contextLength,
    compileInfo: ready.compileInfo,
    verification,
    placement: options.placement ?? null,
    usage: () => board.read(ready.usageDevices),
    async forward(tokens, pos, signal) {
      if (tokens.length === 0 || tokens.length > MAX_FORWARD_TOKENS) throw new RangeError(`forward needs 1..${MAX_FORWARD_TOKENS} tokens, got ${tokens.length}`)
      if (!Number.isInteger(pos) || pos < 0) throw new RangeError(`position must be a non-negative integer, got ${pos}`)
      if (pos + tokens.length > ready.contextLength) {
        throw new ContextOverflowError(`context overflow: position ${pos} + ${tokens.length} tokens > context length ${ready.contextLength}`)
      }
      if (signal?.aborted === true) throw new ForwardCancelledError('the forward was cancelled before it started')
      const logits = await call({ type: 'forward', tokens: [...tokens], pos }, signal)
      if (!(logits instanceof Float32Array)) throw new ProtocolError('forward returned no logits')
      return logits
    },
    async truncate(pos) {
      await call({ type: 'truncate', pos })
    },
    kvSource: ready.kvSource,
    fingerprint: ready.fingerprint,
    async readKv(start, count, format) {
      const data = await call({ type: 'kv-read', start, count, format })
      if (!(data instanceof Uint8Array)) throw new ProtocolError('kv-read returned no bytes')
      return data
    },
    async writeKv(start, count, format, data, reserve = 0) {
      if (data.byteLength > MAX_KV_WIRE_BYTES) throw new RangeError(`a KV block of ${data.byteLength} bytes exceeds ${MAX_KV_WIRE_BYTES}`)
      const whole = data.buffer instanceof ArrayBuffer && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength
      await call({ type: 'kv-write', start, count, reserve, format, data }, undefined, whole && data.buffer instanceof ArrayBuffer ? [data.buffer] : [])
    },
    async dispose() {
      if (disposed) return
      disposed = true
      if (!exitError) {
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
        try {
          await call({ type: 'dispose' })
        } catch {
          // already failing: terminate below
        }
        const timer = setTimeout(() => void worker.terminate(), DISPOSE_EXIT_TIMEOUT_MS)
        await exited
        clearTimeout(timer)
      }
      exitError = new WorkerExitedError('model worker client disposed')
    }
  }
}
