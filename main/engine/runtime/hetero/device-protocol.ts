/**
 * @file What crosses between the coordinator (DeviceWorkersEngine, in the model worker) and one device worker:
 * the worker's init data, the command op codes of the control block (handoff.ts), the setup messages
 * read from the port (a compiled graph to open, a program to register, the KV layers to hold), and the
 * programs themselves. Programs are registered once at setup; per task only (program, parity, tokens,
 * position) travel, as four integers in the control block. Everything received is validated here.
 */
import type { MessagePort } from 'node:worker_threads'
import { ProtocolError } from '../errors'
import { isControlBuffer } from './handoff'
import { isRecord, MAX_PATH_LENGTH, MAX_POSITION } from '../model-worker/protocol'
import { MAX_USAGE_DEVICES } from '../usage'

/** Command op codes (control block slot 3). */
export const OP = Object.freeze({
  /** no work: measures the hand-off itself */
  ping: 1,
  /** read one setup message from the port and apply it */
  setup: 2,
  /** args: program id, chunk parity, tokens in the chunk, position of its first token */
  run: 3,
  /** release everything and end the worker */
  exit: 4
})

/** Most programs one device worker holds. */
export const MAX_PROGRAMS = 1 << 16
/** Longest label (for error messages) accepted on the wire. */
const MAX_LABEL_LENGTH = 512
/** Most graph outputs one program routes. */
const MAX_ROUTES = 4096

/** KV cache geometry every layer held by a worker shares. */
export interface KvGeometry {
  readonly nKvHeads: number
  readonly headDim: number
  /** positions a layer's cache may hold (the context length) */
  readonly maxLen: number
}

/** The device worker's workerData. */
export interface DeviceWorkerInit {
  readonly deviceId: string
  /** execution provider name ('cpu', 'webgpu', ...) */
  readonly ep: string
  /** intra-op threads for CPU-EP sessions (undefined: ORT's default) */
  readonly threads?: number
  readonly control: SharedArrayBuffer
  /** setup payloads in, error details out; read synchronously, never with a 'message' listener */
  readonly port: MessagePort
  /** the value arena's init data (validated separately by ValueArena.attach) */
  readonly arena: unknown
  readonly usage: SharedArrayBuffer
  /** this device's slot in the usage board */
  readonly usageSlot: number
  readonly kv: KvGeometry
}

/** Where one graph output goes: value `value`'s arena slot, at feature offset `start`. */
export interface OutputRoute {
  readonly value: string
  readonly start: number
}

/**
 * A compiled graph run on a device: inputs are bound by name (an arena value, `positions`, or the
 * worker's own cache as past_k_L / past_v_L), outputs are routed to arena slots; the packed new_kv output
 * is split into `kv` (one route per packed value, in packing order). A sequence part runs tokens
 * [tokenStart, tokenStart + tokenCount) of the chunk (tokenCount null: to the end); a whole run uses 0, null.
 */
export interface GraphProgram {
  readonly kind: 'graph'
  readonly label: string
  readonly session: string
  readonly tokenStart: number
  readonly tokenCount: number | null
  /** graph output name -> route (KV_OUTPUT excluded) */
  readonly outputs: Readonly<Record<string, OutputRoute>>
  /** one route per value packed in KV_OUTPUT, in packing order */
  readonly kv: readonly OutputRoute[]
  /**
   * packed values no other task reads in this phase: they only feed this worker's own cache (its
   * attention is in the same graph), so they never go through the arena
   */
  readonly local: readonly string[]
}

/** A 'sum' join: adds the partial value's rows into the target value's rows. */
export interface SumProgram {
  readonly kind: 'sum'
  readonly label: string
  readonly target: string
  readonly partial: string
}

/** Copies layer `layer`'s new K/V rows from the arena into this worker's cache (it holds the layer, another device ran it). */
export interface AppendProgram {
  readonly kind: 'append'
  readonly label: string
  readonly layer: number
}

/** Any program a device worker runs. */
export type DeviceProgram = GraphProgram | SumProgram | AppendProgram

/** Setup messages (coordinator -> worker, one per OP.setup). */
export type SetupMessage =
  | { readonly type: 'session'; readonly key: string; readonly label: string; readonly bytes: Uint8Array }
  | { readonly type: 'program'; readonly id: number; readonly program: DeviceProgram }
  | { readonly type: 'kv'; readonly layers: readonly number[] }

function str(o: Record<string, unknown>, key: string, max = MAX_LABEL_LENGTH): string {
  const v = o[key]
  if (typeof v !== 'string' || v.length === 0 || v.length > max) throw new ProtocolError(`${key} must be a string of 1..${max} characters`)
  return v
}

function int(o: Record<string, unknown>, key: string, min: number, max: number): number {
  const v = o[key]
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new ProtocolError(`${key} must be an integer in [${min}, ${max}], got ${String(v)}`)
  return v
}

function route(v: unknown): OutputRoute {
  if (!isRecord(v)) throw new ProtocolError('an output route must be an object')
  return { value: str(v, 'value'), start: int(v, 'start', 0, 2 ** 28) }
}

function kvGeometry(v: unknown): KvGeometry {
  if (!isRecord(v)) throw new ProtocolError('kv geometry must be an object')
  return { nKvHeads: int(v, 'nKvHeads', 1, 1 << 16), headDim: int(v, 'headDim', 1, 1 << 16), maxLen: int(v, 'maxLen', 1, MAX_POSITION) }
}

function hasPostMessage(v: unknown): v is MessagePort {
  return isRecord(v) && typeof v.postMessage === 'function' && typeof v.close === 'function'
}

/** Validates a device worker's workerData. */
export function parseDeviceWorkerInit(v: unknown): DeviceWorkerInit {
  if (!isRecord(v)) throw new ProtocolError('device worker init must be an object')
  const { control, port, usage } = v
  if (!isControlBuffer(control)) throw new ProtocolError('control must be a control block')
  if (!hasPostMessage(port)) throw new ProtocolError('port must be a MessagePort')
  if (!(usage instanceof SharedArrayBuffer)) throw new ProtocolError('usage must be a SharedArrayBuffer')
  return {
    deviceId: str(v, 'deviceId', 64),
    ep: str(v, 'ep', 64),
    threads: v.threads === undefined ? undefined : int(v, 'threads', 0, 1024),
    control,
    port,
    arena: v.arena,
    usage,
    usageSlot: int(v, 'usageSlot', 0, MAX_USAGE_DEVICES - 1),
    kv: kvGeometry(v.kv)
  }
}

function parseProgram(v: unknown): DeviceProgram {
  if (!isRecord(v)) throw new ProtocolError('program must be an object')
  const label = str(v, 'label')
  switch (v.kind) {
    case 'graph': {
      const outputs: Record<string, OutputRoute> = {}
      if (!isRecord(v.outputs)) throw new ProtocolError('graph program outputs must be an object')
      const entries = Object.entries(v.outputs)
      if (entries.length > MAX_ROUTES) throw new ProtocolError(`at most ${MAX_ROUTES} output routes`)
      for (const [name, r] of entries) outputs[name] = route(r)
      if (!Array.isArray(v.kv) || v.kv.length > MAX_ROUTES) throw new ProtocolError(`kv must be an array of at most ${MAX_ROUTES} routes`)
      const tokenCount = v.tokenCount === null ? null : int(v, 'tokenCount', 1, MAX_POSITION)
      if (!Array.isArray(v.local) || v.local.length > MAX_ROUTES) throw new ProtocolError(`local must be an array of at most ${MAX_ROUTES} value names`)
      const local = v.local.map((name: unknown) => {
        if (typeof name !== 'string' || name.length === 0 || name.length > MAX_LABEL_LENGTH) throw new ProtocolError('local must hold value names')
        return name
      })
      return { kind: 'graph', label, session: str(v, 'session', MAX_PATH_LENGTH), tokenStart: int(v, 'tokenStart', 0, MAX_POSITION), tokenCount, outputs, kv: v.kv.map(route), local }
    }
    case 'sum':
      return { kind: 'sum', label, target: str(v, 'target'), partial: str(v, 'partial') }
    case 'append':
      return { kind: 'append', label, layer: int(v, 'layer', 0, 1 << 16) }
    default:
      throw new ProtocolError(`unknown program kind ${String(v.kind)}`)
  }
}

/** Validates a setup message. */
export function parseSetupMessage(v: unknown): SetupMessage {
  if (!isRecord(v)) throw new ProtocolError('setup message must be an object')
  switch (v.type) {
    case 'session': {
      if (!(v.bytes instanceof Uint8Array) || v.bytes.length === 0) throw new ProtocolError('session bytes must be a non-empty Uint8Array')
      return { type: 'session', key: str(v, 'key', MAX_PATH_LENGTH), label: str(v, 'label'), bytes: v.bytes }
    }
    case 'program':
      return { type: 'program', id: int(v, 'id', 0, MAX_PROGRAMS - 1), program: parseProgram(v.program) }
    case 'kv': {
      if (!Array.isArray(v.layers) || v.layers.length > 1 << 16) throw new ProtocolError('kv layers must be an array')
      const layers = v.layers.map((l: unknown) => {
        if (typeof l !== 'number' || !Number.isInteger(l) || l < 0 || l >= 1 << 16) throw new ProtocolError(`kv layer must be a layer index, got ${String(l)}`)
        return l
      })
      return { type: 'kv', layers }
    }
    default:
      throw new ProtocolError(`unknown setup message ${String(v.type)}`)
  }
}
