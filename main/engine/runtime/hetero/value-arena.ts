/**
 * @file The value arena: where activations cross between device workers. One SharedArrayBuffer holds one
 * slot per logical value name (resid_3, q_rot_0, new_v_2, logits, ...), each sized for the largest run
 * (rows × width float32, rows = the prefill chunk for per-token values, 1 for last-row values), twice:
 * slots are double-buffered by chunk parity, so chunk c + 1 can be produced while chunk c is consumed
 * (the scheduler keeps at most two chunks in flight). Row-major [rows, width] in every slot; a producer
 * writes its rows and feature range, a consumer copies them out into an ordinary ArrayBuffer for ORT
 * (onnxruntime-node rejects SharedArrayBuffer-backed tensors).
 */
import { ProtocolError } from '../errors'
import { isRecord } from '../model-worker/protocol'

/** Largest arena (both parities) we allocate, bytes. */
export const MAX_ARENA_BYTES = 2 ** 31
/** Most slots in one arena. */
export const MAX_ARENA_SLOTS = 1 << 16
/** Longest value name accepted on the wire. */
const MAX_VALUE_NAME_LENGTH = 128

/** What one slot holds. */
export interface SlotShape {
  readonly name: string
  /** floats per row (the value's last axis) */
  readonly width: number
  /** most rows a run writes (the chunk length, or 1) */
  readonly rows: number
  /** other values that share the slot (never live at the same time as `name`; see slot-sharing.ts) */
  readonly aliases?: readonly string[]
}

/** A slot's place in the arena. */
export interface ArenaSlot extends SlotShape {
  readonly aliases: readonly string[]
  /** start of the parity-0 copy, in floats; parity 1 starts `parityStride` floats later */
  readonly offset: number
}

/** The plain data that recreates an arena on another thread (structured-cloneable). */
export interface ArenaInit {
  readonly slots: readonly ArenaSlot[]
  readonly parityStride: number
  readonly buffer: SharedArrayBuffer
}

/** Chunk parity: which of a slot's two copies a chunk uses. */
export type Parity = 0 | 1

/** One SharedArrayBuffer of double-buffered value slots, with their views made once. */
export class ValueArena {
  private readonly byName = new Map<string, number>()
  private readonly views: Float32Array[][]

  private constructor(readonly init: ArenaInit) {
    init.slots.forEach((s, i) => {
      for (const name of [s.name, ...s.aliases]) {
        if (this.byName.has(name)) throw new ProtocolError(`arena value ${name} has two slots`)
        this.byName.set(name, i)
      }
    })
    this.views = [0, 1].map((p) => init.slots.map((s) => new Float32Array(init.buffer, (p * init.parityStride + s.offset) * 4, s.rows * s.width)))
  }

  /** Lays out `shapes` (names unique) in a new zeroed buffer. */
  static create(shapes: readonly SlotShape[]): ValueArena {
    if (shapes.length > MAX_ARENA_SLOTS) throw new RangeError(`${shapes.length} arena slots exceed ${MAX_ARENA_SLOTS}`)
    const slots: ArenaSlot[] = []
    let offset = 0
    const seen = new Set<string>()
    for (const s of shapes) {
      const aliases = s.aliases ?? []
      for (const name of [s.name, ...aliases]) {
        if (seen.has(name)) throw new Error(`arena value ${name} listed twice`)
        seen.add(name)
      }
      checkShape(s)
      slots.push({ name: s.name, width: s.width, rows: s.rows, aliases, offset })
      // 16-float alignment keeps every slot on its own 64-byte line
      offset += Math.ceil((s.rows * s.width) / 16) * 16
    }
    const bytes = 2 * offset * 4
    if (bytes > MAX_ARENA_BYTES) {
      throw new RangeError(`the value arena would take ${(bytes / 2 ** 20).toFixed(0)} MiB (> ${MAX_ARENA_BYTES / 2 ** 20} MiB); use a shorter prefill chunk`)
    }
    return new ValueArena({ slots, parityStride: offset, buffer: new SharedArrayBuffer(Math.max(4, bytes)) })
  }

  /** Recreates an arena from init data received across the worker boundary (validated). */
  static attach(v: unknown): ValueArena {
    if (!isRecord(v)) throw new ProtocolError('arena init must be an object')
    const { slots, parityStride, buffer } = v
    if (!(buffer instanceof SharedArrayBuffer)) throw new ProtocolError('arena buffer must be a SharedArrayBuffer')
    if (typeof parityStride !== 'number' || !Number.isInteger(parityStride) || parityStride < 0 || 2 * parityStride * 4 > buffer.byteLength) {
      throw new ProtocolError('arena parityStride does not fit its buffer')
    }
    if (!Array.isArray(slots) || slots.length > MAX_ARENA_SLOTS) throw new ProtocolError(`arena slots must be an array of at most ${MAX_ARENA_SLOTS}`)
    const parsed: ArenaSlot[] = slots.map((s: unknown) => {
      if (!isRecord(s)) throw new ProtocolError('arena slot must be an object')
      const shape = { name: s.name, width: s.width, rows: s.rows }
      if (typeof shape.name !== 'string' || typeof shape.width !== 'number' || typeof shape.rows !== 'number') throw new ProtocolError('arena slot needs name, width, rows')
      const slot = { name: shape.name, width: shape.width, rows: shape.rows, offset: s.offset }
      const aliases = s.aliases
      if (!Array.isArray(aliases) || aliases.length > MAX_ARENA_SLOTS) throw new ProtocolError(`arena slot ${slot.name}: aliases must be an array`)
      const names = aliases.map((a: unknown) => {
        if (typeof a !== 'string') throw new ProtocolError(`arena slot ${slot.name}: aliases must be value names`)
        return a
      })
      try {
        checkShape({ name: slot.name, width: slot.width, rows: slot.rows })
        for (const a of names) checkShape({ name: a, width: slot.width, rows: slot.rows })
      } catch (err) {
        throw new ProtocolError(err instanceof Error ? err.message : String(err))
      }
      if (typeof slot.offset !== 'number' || !Number.isInteger(slot.offset) || slot.offset < 0 || slot.offset + slot.rows * slot.width > parityStride) {
        throw new ProtocolError(`arena slot ${slot.name} lies outside its parity stride`)
      }
      return { name: slot.name, width: slot.width, rows: slot.rows, aliases: names, offset: slot.offset }
    })
    return new ValueArena({ slots: parsed, parityStride, buffer })
  }

  /** Number of slots. */
  get size(): number {
    return this.init.slots.length
  }

  /** Bytes of the shared buffer (both parities). */
  get sizeBytes(): number {
    return this.init.buffer.byteLength
  }

  /** The slot index of value `name`, or -1 when the arena has no such value. */
  indexOf(name: string): number {
    return this.byName.get(name) ?? -1
  }

  /** The slot index of value `name`; throws when absent. */
  slotIndex(name: string): number {
    const i = this.byName.get(name)
    if (i === undefined) throw new Error(`value ${name} has no arena slot`)
    return i
  }

  /** Slot `index`'s shape and offset. */
  slot(index: number): ArenaSlot {
    const s = this.init.slots[index]
    if (s === undefined) throw new RangeError(`no arena slot ${index}`)
    return s
  }

  /** The whole [rows, width] view of slot `index` for chunk parity `parity`. */
  view(index: number, parity: Parity): Float32Array {
    const v = this.views[parity][index]
    if (v === undefined) throw new RangeError(`no arena slot ${index}`)
    return v
  }
}

function checkShape(s: SlotShape): void {
  if (s.name.length === 0 || s.name.length > MAX_VALUE_NAME_LENGTH) throw new RangeError(`arena value name must be 1..${MAX_VALUE_NAME_LENGTH} characters`)
  for (const [k, n] of [['width', s.width], ['rows', s.rows]] as const) {
    if (!Number.isInteger(n) || n < 1 || n > 2 ** 28) throw new RangeError(`arena value ${s.name}: ${k} must be an integer in [1, 2^28], got ${n}`)
  }
}

/** Parity of chunk `c`. */
export function parityOf(chunk: number): Parity {
  return chunk % 2 === 0 ? 0 : 1
}
