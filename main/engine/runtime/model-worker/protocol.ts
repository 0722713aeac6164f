/**
 * @file The model worker's wire protocol: the init data, requests (main -> worker) and responses
 * (worker -> main) as discriminated unions, and validators that turn an unknown message into one of
 * them or throw ProtocolError. Both sides validate everything they receive.
 */
import { FieldReader, failWith, isRecord } from '../../../common/reader'
import { MAX_DEVICE_ID_LENGTH, readDeviceList, type DeviceInfo } from '../../devices'
import { readModelConfig, readWeightLayout, type ModelConfig, type WeightLayout } from '../../model'
import { ProtocolError } from '../errors'
import { readLoadProgress, type LoadProgress } from '../load-progress'
import { GRAPH_VERIFICATIONS, type CompileInfo, type GraphVerification } from '../session/open-cached-graph'
import { MAX_USAGE_DEVICES } from '../usage'
import { kvBytesField, MAX_PATH_LENGTH, MAX_POSITION } from '../wire-limits'
import type { W8A8Request } from '../w8a8-setup'
import { KV_FORMATS, type KvFormat } from '../kv-snapshot'

/** Most tokens one forward request may carry (a whole context of the largest models, with margin). */
export const MAX_FORWARD_TOKENS = 1 << 20
/** Longest error message accepted on the wire (ORT's can list whole graphs). */
const MAX_WIRE_MESSAGE_LENGTH = 1 << 20

/**
 * What the worker needs to start (sent as workerData): the model as the caller's header parse found it (its
 * config, and where its weights lie), so the worker reads the weights without parsing the header again.
 */
export interface WorkerInit {
  readonly config: ModelConfig
  readonly layout: WeightLayout
  readonly cacheDir?: string
  readonly threads?: number
  readonly maxContext?: number
  /** Placement JSON (validated in the worker with parsePlacement against `devices`) */
  readonly placement?: unknown
  /** the caller's discovered devices */
  readonly devices?: readonly DeviceInfo[]
  /** tokens per prefill chunk when there is no placement (a placement brings its own); default the planner's */
  readonly prefillChunkTokens?: number
  /** run the layer matmuls in W8A8 with shadow segments (needs a placement and the stored calibration) */
  readonly w8a8?: W8A8Request
  /** the usage board the worker's devices record busy time in (see usage.ts) */
  readonly usage?: SharedArrayBuffer
  /** one Int32: the id of a forward the client cancelled (checked between prefill chunks) */
  readonly cancel: SharedArrayBuffer
}


/** main -> worker. */
export type WorkerRequest =
  | { readonly type: 'forward'; readonly id: number; readonly tokens: readonly number[]; readonly pos: number }
  | { readonly type: 'truncate'; readonly id: number; readonly pos: number }
  /** the cached positions [start, start + count) as snapshot bytes (answered with 'kv') */
  | { readonly type: 'kv-read'; readonly id: number; readonly start: number; readonly count: number; readonly format: KvFormat }
  /** snapshot bytes of `count` positions put at positions start.., room made for `reserve` positions at once (answered with 'done') */
  | { readonly type: 'kv-write'; readonly id: number; readonly start: number; readonly count: number; readonly reserve: number; readonly format: KvFormat; readonly data: Uint8Array }
  | { readonly type: 'dispose'; readonly id: number }

/** An error as it crosses the boundary. */
export interface WireError {
  readonly name: string
  readonly message: string
}

/** worker -> main. */
export type WorkerResponse =
  | {
      readonly type: 'ready'
      readonly contextLength: number
      readonly compileInfo: CompileInfo
      /** the devices in use, in usage-board slot order (a missing field reads as none) */
      readonly usageDevices: readonly string[]
      /** what the KV cache's values depend on besides the weights (ModelWorkerClient.kvSource) */
      readonly kvSource: string
      /** the model's fingerprint (graph cache key material: config, tensors, sampled rows) */
      readonly fingerprint: string
    }
  | { readonly type: 'init-error'; readonly error: WireError }
  /** while starting: what the open is doing */
  | { readonly type: 'progress'; readonly progress: LoadProgress }
  /** once after 'ready': the full content hash against the one the cached graph was compiled from (see verifyCachedGraph) */
  | { readonly type: 'verification'; readonly result: GraphVerification }
  | { readonly type: 'logits'; readonly id: number; readonly logits: Float32Array }
  | { readonly type: 'kv'; readonly id: number; readonly data: Uint8Array }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'error'; readonly id: number | null; readonly error: WireError }

const fail = failWith((message) => new ProtocolError(message))

/** Validates the worker's init data. */
export function parseWorkerInit(v: unknown): WorkerInit {
  const r = new FieldReader(fail, 'init', v)
  const raw = r.raw('usage')
  const usage = raw === undefined || raw instanceof SharedArrayBuffer ? raw : r.reject('usage', 'expected a SharedArrayBuffer')
  const cancel = r.raw('cancel')
  if (!(cancel instanceof SharedArrayBuffer) || cancel.byteLength !== 4) return r.reject('cancel', 'expected a SharedArrayBuffer of one Int32')
  return {
    config: readModelConfig(fail, r.at('config'), r.raw('config')),
    layout: readWeightLayout(fail, r.at('layout'), r.raw('layout')),
    cacheDir: r.optionalString('cacheDir', MAX_PATH_LENGTH),
    threads: r.optionalInt('threads', 0, 1024),
    maxContext: r.optionalInt('maxContext', 1, MAX_POSITION),
    prefillChunkTokens: r.optionalInt('prefillChunkTokens', 1, MAX_POSITION),
    placement: r.raw('placement'),
    w8a8: r.raw('w8a8') === undefined ? undefined : { shadowPrunedPercent: r.record('w8a8', ['shadowPrunedPercent']).number('shadowPrunedPercent', 0, 100) },
    devices: r.raw('devices') === undefined ? undefined : readDeviceList(fail, r.at('devices'), r.raw('devices')),
    usage,
    cancel
  }
}

/** Longest KV source description accepted (a device id, or a placement hash). */
const MAX_KV_SOURCE_LENGTH = 256

/** Validates a request; throws ProtocolError naming what is wrong. */
export function parseWorkerRequest(v: unknown): WorkerRequest {
  const r = new FieldReader(fail, 'request', v)
  const id = r.int('id', 0, Number.MAX_SAFE_INTEGER)
  switch (r.choice('type', ['forward', 'truncate', 'kv-read', 'kv-write', 'dispose'])) {
    case 'forward':
      return { type: 'forward', id, tokens: r.ints('tokens', MAX_FORWARD_TOKENS, 0, Number.MAX_SAFE_INTEGER, 1), pos: r.int('pos', 0, MAX_POSITION) }
    case 'truncate':
      return { type: 'truncate', id, pos: r.int('pos', 0, MAX_POSITION) }
    case 'kv-read':
      return { type: 'kv-read', id, start: r.int('start', 0, MAX_POSITION), count: r.int('count', 1, MAX_POSITION), format: r.choice('format', KV_FORMATS) }
    case 'kv-write': {
      const data = kvBytesField(r, 'data')
      return { type: 'kv-write', id, start: r.int('start', 0, MAX_POSITION), count: r.int('count', 1, MAX_POSITION), reserve: r.int('reserve', 0, MAX_POSITION), format: r.choice('format', KV_FORMATS), data }
    }
    case 'dispose':
      return { type: 'dispose', id }
  }
}

/** The request id of a message, if it has a valid one (to address an error reply). */
export function requestIdOf(v: unknown): number | null {
  if (!isRecord(v)) return null
  const id = v.id
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? id : null
}

function readWireError(r: FieldReader): WireError {
  const e = r.record('error')
  return { name: e.text('name', MAX_PATH_LENGTH), message: e.text('message', MAX_WIRE_MESSAGE_LENGTH) }
}

/** Validates a response from the worker of a model with `config` (logits length, context length). */
export function parseWorkerResponse(v: unknown, config: ModelConfig): WorkerResponse {
  const r = new FieldReader(fail, 'response', v)
  switch (r.choice('type', ['ready', 'init-error', 'progress', 'verification', 'logits', 'kv', 'done', 'error'])) {
    case 'ready': {
      const info = r.record('compileInfo')
      return {
        type: 'ready',
        contextLength: r.int('contextLength', 1, config.contextLength),
        compileInfo: { cacheHit: info.bool('cacheHit'), compileMs: info.number('compileMs', 0, Infinity), sessionMs: info.number('sessionMs', 0, Infinity), graphPath: info.string('graphPath', MAX_PATH_LENGTH) },
        usageDevices: r.raw('usageDevices') === undefined ? [] : r.strings('usageDevices', MAX_USAGE_DEVICES, MAX_DEVICE_ID_LENGTH),
        kvSource: r.string('kvSource', MAX_KV_SOURCE_LENGTH),
        fingerprint: r.string('fingerprint', 128)
      }
    }
    case 'init-error':
      return { type: 'init-error', error: readWireError(r) }
    case 'progress':
      return { type: 'progress', progress: readLoadProgress(r.record('progress')) }
    case 'verification':
      return { type: 'verification', result: r.choice('result', GRAPH_VERIFICATIONS) }
    case 'logits': {
      const logits = r.raw('logits')
      if (!(logits instanceof Float32Array)) return r.reject('logits', 'expected a Float32Array')
      if (logits.length !== config.vocabSize) r.reject('logits', `expected ${config.vocabSize} logits, got ${logits.length}`)
      return { type: 'logits', id: r.int('id', 0, Number.MAX_SAFE_INTEGER), logits }
    }
    case 'kv': {
      const data = kvBytesField(r, 'data')
      return { type: 'kv', id: r.int('id', 0, Number.MAX_SAFE_INTEGER), data }
    }
    case 'done':
      return { type: 'done', id: r.int('id', 0, Number.MAX_SAFE_INTEGER) }
    case 'error':
      return { type: 'error', id: r.raw('id') === null ? null : r.int('id', 0, Number.MAX_SAFE_INTEGER), error: readWireError(r) }
  }
}

/** Any thrown value as a WireError. */
export function toWireError(err: unknown): WireError {
  if (err instanceof Error) return { name: err.name, message: err.message }
  return { name: 'Error', message: String(err) }
}
