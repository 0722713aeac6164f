/**
 * @file Messages between the benchmark's parent and a placement child (bench/placement-child.ts): one
 * process per placement, so each keeps its WebGPU work in its own process (two WebGPU threads in one
 * process crash; see the toolchain notes) and all of them stay open while the parent alternates between
 * them. Both sides validate what they receive.
 */
import { numberArray, numberField, record, stringField } from './guards'

/** How a placement child starts (its one argv argument, JSON). */
export interface PlacementChildInit {
  readonly role: 'placement'
  readonly modelPath: string
  /** a Placement as JSON: the child validates it against the model and `devices` */
  readonly placement: unknown
  /** the parent's probed DeviceInfo list, as JSON (validated in the child) */
  readonly devices: unknown
  /** positions the KV cache holds */
  readonly contextSize: number
  readonly graphCacheDir: string
}

/** Parent -> placement child. */
export type PlacementRequest =
  /** rewind to an empty cache (untimed), then run `tokens` at 0..: the timed prefill; returns the greedy next token */
  | { readonly id: number; readonly op: 'prefill'; readonly tokens: readonly number[] }
  /** feed `first` at `pos`, then each greedy token: `steps` timed single-token forwards */
  | { readonly id: number; readonly op: 'decode'; readonly first: number; readonly pos: number; readonly steps: number }
  | { readonly id: number; readonly op: 'exit' }

/** Busy milliseconds of one device during a call. */
export interface DeviceBusy {
  readonly id: string
  readonly busyMs: number
}

/** Placement child -> parent. */
export type PlacementMessage =
  /** `deviceIds`: the devices the runner uses (its usage slots); `setup`: how the runner says it started */
  | { readonly type: 'ready'; readonly loadMs: number; readonly deviceIds: readonly string[]; readonly setup: string }
  | { readonly type: 'result'; readonly id: number; readonly ms: number; readonly tokens: readonly number[]; readonly busy: readonly DeviceBusy[] }
  | { readonly type: 'bye'; readonly id: number }
  | { readonly type: 'error'; readonly id: number | null; readonly message: string }

function count(obj: Record<string, unknown>, key: string, what: string): number {
  const v = numberField(obj, key, what)
  if (!Number.isInteger(v) || v < 0) throw new TypeError(`${what}.${key} must be a non-negative integer, got ${v}`)
  return v
}

function tokenList(value: unknown, what: string): number[] {
  const list = numberArray(value, what)
  for (const t of list) if (!Number.isInteger(t) || t < 0) throw new TypeError(`${what}: token ${t} is not a non-negative integer`)
  return list
}

function stringList(value: unknown, what: string): string[] {
  if (!Array.isArray(value)) throw new TypeError(`${what}: expected an array`)
  return value.map((v, i) => {
    if (typeof v !== 'string') throw new TypeError(`${what}[${i}]: expected a string`)
    return v
  })
}

/** Validates a placement child's init argument. */
export function parsePlacementChildInit(json: string): PlacementChildInit {
  const o = record(JSON.parse(json), 'placement child init')
  if (o.role !== 'placement') throw new TypeError('placement child init.role must be "placement"')
  return {
    role: 'placement',
    modelPath: stringField(o, 'modelPath', 'placement child init'),
    placement: o.placement,
    devices: o.devices,
    contextSize: count(o, 'contextSize', 'placement child init'),
    graphCacheDir: stringField(o, 'graphCacheDir', 'placement child init')
  }
}

/** Validates a request arriving in a placement child. */
export function parsePlacementRequest(raw: unknown): PlacementRequest {
  const o = record(raw, 'request')
  const id = count(o, 'id', 'request')
  const op = stringField(o, 'op', 'request')
  switch (op) {
    case 'prefill':
      return { id, op, tokens: tokenList(o.tokens, 'request.tokens') }
    case 'decode':
      return { id, op, first: count(o, 'first', 'request'), pos: count(o, 'pos', 'request'), steps: count(o, 'steps', 'request') }
    case 'exit':
      return { id, op }
    default:
      throw new TypeError(`request.op: unknown op ${op}`)
  }
}

function busyList(value: unknown): DeviceBusy[] {
  if (!Array.isArray(value)) throw new TypeError('result.busy: expected an array')
  return value.map((v, i) => {
    const r = record(v, `result.busy[${i}]`)
    return { id: stringField(r, 'id', `result.busy[${i}]`), busyMs: numberField(r, 'busyMs', `result.busy[${i}]`) }
  })
}

/** Validates a message from a placement child. */
export function parsePlacementMessage(raw: unknown): PlacementMessage {
  const o = record(raw, 'placement message')
  const type = stringField(o, 'type', 'placement message')
  switch (type) {
    case 'ready':
      return { type, loadMs: numberField(o, 'loadMs', 'ready'), deviceIds: stringList(o.deviceIds, 'ready.deviceIds'), setup: stringField(o, 'setup', 'ready') }
    case 'result':
      return { type, id: count(o, 'id', 'result'), ms: numberField(o, 'ms', 'result'), tokens: tokenList(o.tokens, 'result.tokens'), busy: busyList(o.busy) }
    case 'bye':
      return { type, id: count(o, 'id', 'bye') }
    case 'error':
      return { type, id: o.id === null ? null : count(o, 'id', 'error'), message: stringField(o, 'message', 'error') }
    default:
      throw new TypeError(`placement message: unknown type ${type}`)
  }
}
