/**
 * @file Messages between the benchmark's parent (orchestrator) and its child processes. Each peer runs in
 * a child of its own so its peak RSS is its own; the parent alternates requests between children. Both
 * sides validate what they receive (IPC data is untrusted input).
 */
import { numberArray, numberField, record, stringField } from './guards'

/** The engines under test. */
export type PeerName = 'tandem' | 'llama.cpp'

/** Peers in table order. */
export const PEER_NAMES: readonly PeerName[] = ['tandem', 'llama.cpp']

/** How a peer child starts (passed as its one argv argument, JSON). */
export interface PeerInit {
  readonly role: 'peer'
  readonly peer: PeerName
  readonly modelPath: string
  /** compute threads (ORT intra-op / llama.cpp threads) */
  readonly threads: number
  /** positions the KV cache holds */
  readonly contextSize: number
  /** tokens per llama.cpp batch (Tandem chunks prefill itself) */
  readonly batchSize: number
  /** Tandem's compiled-graph cache folder */
  readonly graphCacheDir: string
  /** folder holding bench/peers/node_modules */
  readonly peersDir: string
}

/** How the machine-limits child starts. */
export interface LimitsInit {
  readonly role: 'limits'
  /** bytes of the float32 buffer the bandwidth probe sums */
  readonly bandwidthBytes: number
  /** M, K, N of the MatMul probe ([M,K] · [K,N]) */
  readonly matmul: readonly [number, number, number]
  readonly threadCounts: readonly number[]
  readonly reps: number
}

export type ChildInit = PeerInit | LimitsInit

/** Parent -> peer child. */
export type PeerRequest =
  /** drop cached positions ≥ pos (untimed set-up) */
  | { readonly id: number; readonly op: 'reset'; readonly pos: number }
  /** run `tokens` at positions pos.., return the greedy next token (timed: prefill / time to first token) */
  | { readonly id: number; readonly op: 'evaluate'; readonly tokens: readonly number[]; readonly pos: number }
  /** feed `first` at `pos`, then each greedy token: `steps` single-token forwards (timed: decode) */
  | { readonly id: number; readonly op: 'decode'; readonly first: number; readonly pos: number; readonly steps: number }
  /** the child's resident memory now and at its peak (untimed) */
  | { readonly id: number; readonly op: 'memory' }
  | { readonly id: number; readonly op: 'exit' }

/** Load report values: flat and printable. */
export type Details = Readonly<Record<string, string | number | boolean>>

/** Peer child -> parent. */
export type PeerMessage =
  | { readonly type: 'ready'; readonly loadMs: number; readonly details: Details }
  /** `tokens`: the greedy tokens produced (evaluate: one; decode: `steps`) */
  | { readonly type: 'result'; readonly id: number; readonly ms: number; readonly tokens: readonly number[] }
  | { readonly type: 'memory'; readonly id: number; readonly rssBytes: number; readonly peakRssBytes: number }
  | { readonly type: 'bye'; readonly id: number; readonly maxRssBytes: number }
  | { readonly type: 'error'; readonly id: number | null; readonly message: string }

/** Samples of the machine-limit probes, per thread count. */
export interface LimitSamples {
  readonly threads: number
  /** GB/s (1e9 bytes) reading the buffer with ORT's ReduceSum, one per rep */
  readonly bandwidthGBs: readonly number[]
  /** GB/s of the plain read loop (memchr) over as many bytes, one per rep */
  readonly readLoopGBs: readonly number[]
  /** GFLOP/s of the MatMul, one per rep */
  readonly matmulGflops: readonly number[]
}

/** Limits child -> parent. */
export type LimitsMessage =
  | { readonly type: 'limits'; readonly samples: readonly LimitSamples[]; readonly ortVersion: string }
  | { readonly type: 'error'; readonly id: null; readonly message: string }

function positiveInt(obj: Record<string, unknown>, key: string, what: string): number {
  const v = numberField(obj, key, what)
  if (!Number.isInteger(v) || v < 0) throw new TypeError(`${what}.${key} must be a non-negative integer, got ${v}`)
  return v
}

function tokenList(value: unknown, what: string): number[] {
  const list = numberArray(value, what)
  for (const t of list) if (!Number.isInteger(t) || t < 0) throw new TypeError(`${what}: token ${t} is not a non-negative integer`)
  return list
}

/** Validates a child's init argument. */
export function parseChildInit(json: string): ChildInit {
  const o = record(JSON.parse(json), 'child init')
  const role = stringField(o, 'role', 'child init')
  if (role === 'limits') {
    const mm = numberArray(o.matmul, 'child init.matmul')
    if (mm.length !== 3) throw new TypeError('child init.matmul must be [M, K, N]')
    return {
      role,
      bandwidthBytes: positiveInt(o, 'bandwidthBytes', 'child init'),
      matmul: [mm[0], mm[1], mm[2]],
      threadCounts: numberArray(o.threadCounts, 'child init.threadCounts'),
      reps: positiveInt(o, 'reps', 'child init')
    }
  }
  if (role !== 'peer') throw new TypeError(`child init.role: unknown role ${role}`)
  const peer = stringField(o, 'peer', 'child init')
  if (peer !== 'tandem' && peer !== 'llama.cpp') throw new TypeError(`child init.peer: unknown peer ${peer}`)
  return {
    role,
    peer,
    modelPath: stringField(o, 'modelPath', 'child init'),
    threads: positiveInt(o, 'threads', 'child init'),
    contextSize: positiveInt(o, 'contextSize', 'child init'),
    batchSize: positiveInt(o, 'batchSize', 'child init'),
    graphCacheDir: stringField(o, 'graphCacheDir', 'child init'),
    peersDir: stringField(o, 'peersDir', 'child init')
  }
}

/** Validates a request arriving in a peer child. */
export function parsePeerRequest(raw: unknown): PeerRequest {
  const o = record(raw, 'request')
  const id = positiveInt(o, 'id', 'request')
  const op = stringField(o, 'op', 'request')
  switch (op) {
    case 'reset':
      return { id, op, pos: positiveInt(o, 'pos', 'request') }
    case 'evaluate':
      return { id, op, tokens: tokenList(o.tokens, 'request.tokens'), pos: positiveInt(o, 'pos', 'request') }
    case 'decode':
      return { id, op, first: positiveInt(o, 'first', 'request'), pos: positiveInt(o, 'pos', 'request'), steps: positiveInt(o, 'steps', 'request') }
    case 'memory':
    case 'exit':
      return { id, op }
    default:
      throw new TypeError(`request.op: unknown op ${op}`)
  }
}

function parseDetails(raw: unknown): Details {
  const o = record(raw, 'details')
  const out: Record<string, string | number | boolean> = {}
  for (const [k, v] of Object.entries(o)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new TypeError(`details.${k}: not a printable value`)
    out[k] = v
  }
  return out
}

function parseError(o: Record<string, unknown>): { type: 'error'; id: number | null; message: string } {
  return { type: 'error', id: o.id === null ? null : positiveInt(o, 'id', 'error'), message: stringField(o, 'message', 'error') }
}

/** Validates a message from a peer child. */
export function parsePeerMessage(raw: unknown): PeerMessage {
  const o = record(raw, 'peer message')
  const type = stringField(o, 'type', 'peer message')
  switch (type) {
    case 'ready':
      return { type, loadMs: numberField(o, 'loadMs', 'ready'), details: parseDetails(o.details) }
    case 'result':
      return { type, id: positiveInt(o, 'id', 'result'), ms: numberField(o, 'ms', 'result'), tokens: tokenList(o.tokens, 'result.tokens') }
    case 'memory':
      return { type, id: positiveInt(o, 'id', 'memory'), rssBytes: numberField(o, 'rssBytes', 'memory'), peakRssBytes: numberField(o, 'peakRssBytes', 'memory') }
    case 'bye':
      return { type, id: positiveInt(o, 'id', 'bye'), maxRssBytes: numberField(o, 'maxRssBytes', 'bye') }
    case 'error':
      return parseError(o)
    default:
      throw new TypeError(`peer message: unknown type ${type}`)
  }
}

/** Validates a message from the limits child. */
export function parseLimitsMessage(raw: unknown): LimitsMessage {
  const o = record(raw, 'limits message')
  const type = stringField(o, 'type', 'limits message')
  if (type === 'error') {
    const e = parseError(o)
    return { type: 'error', id: null, message: e.message }
  }
  if (type !== 'limits') throw new TypeError(`limits message: unknown type ${type}`)
  if (!Array.isArray(o.samples)) throw new TypeError('limits message.samples: expected an array')
  const samples = o.samples.map((s, i) => {
    const r = record(s, `samples[${i}]`)
    return {
      threads: positiveInt(r, 'threads', `samples[${i}]`),
      bandwidthGBs: numberArray(r.bandwidthGBs, `samples[${i}].bandwidthGBs`),
      readLoopGBs: numberArray(r.readLoopGBs, `samples[${i}].readLoopGBs`),
      matmulGflops: numberArray(r.matmulGflops, `samples[${i}].matmulGflops`)
    }
  })
  return { type, samples, ortVersion: stringField(o, 'ortVersion', 'limits message') }
}
