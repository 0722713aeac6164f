/**
 * @file The model worker's wire protocol: the init data, requests (main -> worker) and responses
 * (worker -> main) as discriminated unions, and validators that turn an unknown message into one of
 * them or throw ProtocolError. Both sides validate everything they receive.
 */
import { ProtocolError } from '../errors'
import type { CompileInfo } from '../session/open-cached-graph'
import type { ModelConfig } from '../../model'
import { parseModelConfig } from './protocol-config'
import { MAX_USAGE_DEVICES } from '../usage'

/** Longest device id accepted on the wire (plan's MAX_DEVICE_ID_LENGTH). */
const MAX_DEVICE_ID_LENGTH = 64

/** Most tokens one forward request may carry (a whole context of the largest models, with margin). */
export const MAX_FORWARD_TOKENS = 1 << 20
/** Largest position or context length accepted on the wire. */
export const MAX_POSITION = 1 << 24
/** Longest path string accepted on the wire. */
export const MAX_PATH_LENGTH = 4096

/** What the worker needs to start (sent as workerData). */
export interface WorkerInit {
  readonly modelPath: string
  readonly tokenizerPath?: string
  readonly cacheDir?: string
  readonly threads?: number
  readonly maxContext?: number
  /** Placement JSON (validated in the worker with parsePlacement against `devices`) */
  readonly placement?: unknown
  /** the caller's discovered devices (validated in the worker) */
  readonly devices?: unknown
  /** the usage board the worker's devices record busy time in (see usage.ts) */
  readonly usage?: SharedArrayBuffer
}

/** main -> worker. */
export type WorkerRequest =
  | { readonly type: 'forward'; readonly id: number; readonly tokens: readonly number[]; readonly pos: number }
  | { readonly type: 'truncate'; readonly id: number; readonly pos: number }
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
      readonly config: ModelConfig
      readonly contextLength: number
      readonly compileInfo: CompileInfo
      /** the devices in use, in usage-board slot order (a missing field reads as none) */
      readonly usageDevices: readonly string[]
    }
  | { readonly type: 'init-error'; readonly error: WireError }
  | { readonly type: 'logits'; readonly id: number; readonly logits: Float32Array }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'error'; readonly id: number | null; readonly error: WireError }

/** Narrows unknown to a plain object. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

function intField(o: Record<string, unknown>, key: string, min: number, max: number): number {
  const v = o[key]
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new ProtocolError(`${key} must be an integer in [${min}, ${max}], got ${String(v)}`)
  return v
}

function optionalInt(o: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  return o[key] === undefined ? undefined : intField(o, key, min, max)
}

function stringField(o: Record<string, unknown>, key: string): string {
  const v = o[key]
  if (typeof v !== 'string' || v.length === 0 || v.length > MAX_PATH_LENGTH) throw new ProtocolError(`${key} must be a non-empty string of at most ${MAX_PATH_LENGTH} characters`)
  return v
}

function optionalString(o: Record<string, unknown>, key: string): string | undefined {
  return o[key] === undefined ? undefined : stringField(o, key)
}

function boolField(o: Record<string, unknown>, key: string): boolean {
  const v = o[key]
  if (typeof v !== 'boolean') throw new ProtocolError(`${key} must be a boolean`)
  return v
}

function finiteField(o: Record<string, unknown>, key: string): number {
  const v = o[key]
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) throw new ProtocolError(`${key} must be a finite non-negative number`)
  return v
}

/** Validates the worker's init data. */
export function parseWorkerInit(v: unknown): WorkerInit {
  if (!isRecord(v)) throw new ProtocolError('worker init data must be an object')
  return {
    modelPath: stringField(v, 'modelPath'),
    tokenizerPath: optionalString(v, 'tokenizerPath'),
    cacheDir: optionalString(v, 'cacheDir'),
    threads: optionalInt(v, 'threads', 0, 1024),
    maxContext: optionalInt(v, 'maxContext', 1, MAX_POSITION),
    placement: v.placement,
    devices: v.devices,
    usage: usageBuffer(v.usage)
  }
}

function usageBuffer(v: unknown): SharedArrayBuffer | undefined {
  if (v === undefined) return undefined
  if (!(v instanceof SharedArrayBuffer)) throw new ProtocolError('usage must be a SharedArrayBuffer')
  return v
}

/** The ready message's device ids (absent: none, as from a worker that reports no usage). */
function usageDevices(v: unknown): string[] {
  if (v === undefined) return []
  if (!Array.isArray(v) || v.length > MAX_USAGE_DEVICES) throw new ProtocolError(`usageDevices must be an array of at most ${MAX_USAGE_DEVICES} device ids`)
  return v.map((id: unknown) => {
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_DEVICE_ID_LENGTH) throw new ProtocolError('usageDevices must hold device ids')
    return id
  })
}

/** Validates a request; throws ProtocolError naming what is wrong. */
export function parseWorkerRequest(v: unknown): WorkerRequest {
  if (!isRecord(v)) throw new ProtocolError('request must be an object')
  const id = intField(v, 'id', 0, Number.MAX_SAFE_INTEGER)
  switch (v.type) {
    case 'forward': {
      const tokens = v.tokens
      if (!Array.isArray(tokens) || tokens.length === 0 || tokens.length > MAX_FORWARD_TOKENS) {
        throw new ProtocolError(`tokens must be an array of 1..${MAX_FORWARD_TOKENS} token ids`)
      }
      const ids: number[] = []
      for (const t of tokens) {
        if (typeof t !== 'number' || !Number.isInteger(t) || t < 0) throw new ProtocolError(`token ids must be non-negative integers, got ${String(t)}`)
        ids.push(t)
      }
      return { type: 'forward', id, tokens: ids, pos: intField(v, 'pos', 0, MAX_POSITION) }
    }
    case 'truncate':
      return { type: 'truncate', id, pos: intField(v, 'pos', 0, MAX_POSITION) }
    case 'dispose':
      return { type: 'dispose', id }
    default:
      throw new ProtocolError(`unknown request type ${String(v.type)}`)
  }
}

/** The request id of a message, if it has a valid one (to address an error reply). */
export function requestIdOf(v: unknown): number | null {
  if (!isRecord(v)) return null
  const id = v.id
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0 ? id : null
}

function parseWireError(v: unknown): WireError {
  if (!isRecord(v) || typeof v.name !== 'string' || typeof v.message !== 'string') throw new ProtocolError('error must be { name, message }')
  return { name: v.name, message: v.message }
}

function parseCompileInfo(v: unknown): CompileInfo {
  if (!isRecord(v)) throw new ProtocolError('compileInfo must be an object')
  return {
    cacheHit: boolField(v, 'cacheHit'),
    compileMs: finiteField(v, 'compileMs'),
    sessionMs: finiteField(v, 'sessionMs'),
    graphPath: stringField(v, 'graphPath')
  }
}

/** Validates a response; `vocabSize` (once known) checks the logits length. */
export function parseWorkerResponse(v: unknown, vocabSize: number | null): WorkerResponse {
  if (!isRecord(v)) throw new ProtocolError('response must be an object')
  switch (v.type) {
    case 'ready': {
      const config = parseModelConfig(v.config)
      return {
        type: 'ready',
        config,
        contextLength: intField(v, 'contextLength', 1, config.contextLength),
        compileInfo: parseCompileInfo(v.compileInfo),
        usageDevices: usageDevices(v.usageDevices)
      }
    }
    case 'init-error':
      return { type: 'init-error', error: parseWireError(v.error) }
    case 'logits': {
      const logits = v.logits
      if (!(logits instanceof Float32Array)) throw new ProtocolError('logits must be a Float32Array')
      if (vocabSize !== null && logits.length !== vocabSize) throw new ProtocolError(`expected ${vocabSize} logits, got ${logits.length}`)
      return { type: 'logits', id: intField(v, 'id', 0, Number.MAX_SAFE_INTEGER), logits }
    }
    case 'done':
      return { type: 'done', id: intField(v, 'id', 0, Number.MAX_SAFE_INTEGER) }
    case 'error':
      return { type: 'error', id: v.id === null ? null : intField(v, 'id', 0, Number.MAX_SAFE_INTEGER), error: parseWireError(v.error) }
    default:
      throw new ProtocolError(`unknown response type ${String(v.type)}`)
  }
}

/** Any thrown value as a WireError. */
export function toWireError(err: unknown): WireError {
  if (err instanceof Error) return { name: err.name, message: err.message }
  return { name: 'Error', message: String(err) }
}
