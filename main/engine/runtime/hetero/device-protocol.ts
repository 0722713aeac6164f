/**
 * @file What crosses between a coordinator (DeviceWorkersEngine in the model worker, or the profiler) and one
 * device worker: the worker's init data, the command op codes of the control block (handoff.ts), the
 * messages read from the port (a compiled graph to open or release, a program to register, the KV layers to
 * hold, a session run to time), and the programs themselves. Programs are registered once at setup; per task
 * only (program, parity, tokens, position) travel, as four integers in the control block. Everything
 * received is validated here.
 */
import type { MessagePort } from 'node:worker_threads'
import { ProtocolError } from '../errors'
import { FieldReader, failWith, isRecord } from '../../../common/reader'
import { MAX_DEVICE_ID_LENGTH, MAX_PROVIDER_OPTIONS } from '../../devices'
import { isControlBuffer } from './handoff'
import { readTimingRequest, type TimingRequest } from './session-timing'
import { KV_FORMATS, type KvFormat } from '../kv-snapshot'
import { kvBytesField, MAX_PATH_LENGTH, MAX_POSITION } from '../wire-limits'
import { MAX_USAGE_DEVICES } from '../usage'

/** Command op codes (control block slot 3). */
export const OP = Object.freeze({
  /** no work: measures the hand-off itself */
  ping: 1,
  /** read one message from the port and apply it (a 'measure' message replies with the median ms) */
  message: 2,
  /** args: program id, chunk parity, tokens in the chunk, position of its first token */
  run: 3,
  /** release everything and end the worker */
  exit: 4,
  /** args: arena slot, floats: copy them out of the arena and back, as a consumer and a producer do */
  echo: 5
})

/** Most programs one device worker holds. */
export const MAX_PROGRAMS = 1 << 16
/** Longest label (for error messages) accepted on the wire. */
const MAX_LABEL_LENGTH = 512
/** Most graph outputs one program routes. */
const MAX_ROUTES = 4096
/** Largest layer index accepted (a 65,536-layer model is far beyond any real one). */
const MAX_LAYER_INDEX = (1 << 16) - 1

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
  /** intra-op threads for CPU-EP sessions (undefined: the physical cores, devices/cpu-cores.ts) */
  readonly threads?: number
  /** a provider-library device's provider options (DeviceInfo.providerOptions) */
  readonly providerOptions?: Readonly<Record<string, string>>
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

/** Port messages (coordinator -> worker, one per OP.message). */
export type DeviceMessage =
  /**
   * open a session on the graph (ONNX bytes, or the path of a cached graph file) under `key`; `staticRows`:
   * the tokens per run fixed in a static-shape graph (the worker pads shorter runs), null for a dynamic one
   */
  | { readonly type: 'session'; readonly key: string; readonly label: string; readonly model: Uint8Array | string; readonly staticRows: number | null }
  | { readonly type: 'release'; readonly key: string }
  | { readonly type: 'program'; readonly id: number; readonly program: DeviceProgram }
  | { readonly type: 'kv'; readonly layers: readonly number[] }
  /** positions [start, start + count) of layer `layer`'s cache as snapshot bytes (the reply) */
  | { readonly type: 'kv-read'; readonly layer: number; readonly start: number; readonly count: number; readonly format: KvFormat }
  /** snapshot bytes of one layer put at positions start.. of its cache, room made for `reserve` positions */
  | { readonly type: 'kv-write'; readonly layer: number; readonly start: number; readonly count: number; readonly reserve: number; readonly format: KvFormat; readonly data: Uint8Array }
  | { readonly type: 'measure'; readonly request: TimingRequest }

/** Largest fixed token count of a static-shape graph (the longest prefill chunk). */
const MAX_STATIC_ROWS = 8192

const fail = failWith((message) => new ProtocolError(message))

function route(r: FieldReader): OutputRoute {
  return { value: r.string('value', MAX_LABEL_LENGTH), start: r.int('start', 0, 2 ** 28) }
}

function isMessagePort(v: unknown): v is MessagePort {
  return isRecord(v) && typeof v.postMessage === 'function' && typeof v.close === 'function'
}

/** Validates a device worker's workerData. */
export function parseDeviceWorkerInit(v: unknown): DeviceWorkerInit {
  const r = new FieldReader(fail, 'device worker init', v)
  const { control, port, usage } = r.value
  if (!isControlBuffer(control)) return r.reject('control', 'expected a control block')
  if (!isMessagePort(port)) return r.reject('port', 'expected a MessagePort')
  if (!(usage instanceof SharedArrayBuffer)) return r.reject('usage', 'expected a SharedArrayBuffer')
  const kv = r.record('kv')
  return {
    deviceId: r.string('deviceId', MAX_DEVICE_ID_LENGTH),
    ep: r.string('ep', MAX_DEVICE_ID_LENGTH),
    threads: r.optionalInt('threads', 0, 1024),
    ...(r.raw('providerOptions') === undefined ? {} : { providerOptions: r.stringMap('providerOptions', MAX_PROVIDER_OPTIONS, MAX_PATH_LENGTH) }),
    control,
    port,
    arena: r.raw('arena'),
    usage,
    usageSlot: r.int('usageSlot', 0, MAX_USAGE_DEVICES - 1),
    kv: { nKvHeads: kv.int('nKvHeads', 1, 1 << 16), headDim: kv.int('headDim', 1, 1 << 16), maxLen: kv.int('maxLen', 1, MAX_POSITION) }
  }
}

function readProgram(r: FieldReader): DeviceProgram {
  const label = r.string('label', MAX_LABEL_LENGTH)
  switch (r.choice('kind', ['graph', 'sum', 'append'])) {
    case 'graph': {
      const outputs: Record<string, OutputRoute> = {}
      const routes = r.record('outputs')
      const names = Object.keys(routes.value)
      if (names.length > MAX_ROUTES) r.reject('outputs', `at most ${MAX_ROUTES} output routes`)
      for (const name of names) outputs[name] = route(routes.record(name))
      return {
        kind: 'graph',
        label,
        session: r.string('session', MAX_PATH_LENGTH),
        tokenStart: r.int('tokenStart', 0, MAX_POSITION),
        tokenCount: r.raw('tokenCount') === null ? null : r.int('tokenCount', 1, MAX_POSITION),
        outputs,
        kv: r.records('kv', MAX_ROUTES, route),
        local: r.strings('local', MAX_ROUTES, MAX_LABEL_LENGTH)
      }
    }
    case 'sum':
      return { kind: 'sum', label, target: r.string('target', MAX_LABEL_LENGTH), partial: r.string('partial', MAX_LABEL_LENGTH) }
    case 'append':
      return { kind: 'append', label, layer: r.int('layer', 0, MAX_LAYER_INDEX) }
  }
}

/** Validates a port message. */
export function parseDeviceMessage(v: unknown): DeviceMessage {
  const r = new FieldReader(fail, 'device message', v)
  switch (r.choice('type', ['session', 'release', 'program', 'kv', 'kv-read', 'kv-write', 'measure'])) {
    case 'session': {
      const raw = r.raw('model')
      const model = raw instanceof Uint8Array && raw.length > 0 ? raw : r.string('model', MAX_PATH_LENGTH)
      return { type: 'session', key: r.string('key', MAX_PATH_LENGTH), label: r.string('label', MAX_LABEL_LENGTH), model, staticRows: r.intOrNull('staticRows', 1, MAX_STATIC_ROWS) }
    }
    case 'release':
      return { type: 'release', key: r.string('key', MAX_PATH_LENGTH) }
    case 'measure':
      return { type: 'measure', request: readTimingRequest(fail, r.at('request'), r.raw('request')) }
    case 'program':
      return { type: 'program', id: r.int('id', 0, MAX_PROGRAMS - 1), program: readProgram(r.record('program')) }
    case 'kv':
      return { type: 'kv', layers: r.ints('layers', MAX_LAYER_INDEX + 1, 0, MAX_LAYER_INDEX) }
    case 'kv-read':
      return { type: 'kv-read', layer: r.int('layer', 0, MAX_LAYER_INDEX), start: r.int('start', 0, MAX_POSITION), count: r.int('count', 1, MAX_POSITION), format: r.choice('format', KV_FORMATS) }
    case 'kv-write': {
      const data = kvBytesField(r, 'data')
      return { type: 'kv-write', layer: r.int('layer', 0, MAX_LAYER_INDEX), start: r.int('start', 0, MAX_POSITION), count: r.int('count', 1, MAX_POSITION), reserve: r.int('reserve', 0, MAX_POSITION), format: r.choice('format', KV_FORMATS), data }
    }
  }
}
