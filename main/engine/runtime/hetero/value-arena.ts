/**
 * @file The value arena: where activations cross between device workers. One SharedArrayBuffer holds one
 * slot per logical value name (resid_3, q_rot_0, new_v_2, logits, ...), each sized for the largest run
 * (rows × width float32, rows = the prefill chunk for per-token values, 1 for last-row values), twice:
 * slots are double-buffered by chunk parity, so chunk c + 1 can be produced while chunk c is consumed
 * (the scheduler keeps at most two chunks in flight). Row-major [rows, width] in every slot; a producer
 * writes its rows and feature range, a consumer copies them out into an ordinary ArrayBuffer for ORT
 * (onnxruntime-node rejects SharedArrayBuffer-backed tensors).
 */
import { FieldReader, failWith, readInteger, readString } from '../../../common/reader'
import { ProtocolError } from '../errors'

const fail = failWith((message) => new ProtocolError(message))

/** Largest arena (both parities) we allocate, bytes. */
export const MAX_ARENA_BYTES = 2 ** 31
/** Most slots in one arena. */
export const MAX_ARENA_SLOTS = 1 << 16
/** Longest value name accepted on the wire. */
const MAX_VALUE_NAME_LENGTH = 128
/** Largest rows or width of one slot. */
const MAX_SLOT_DIM = 2 ** 28

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
    const r = new FieldReader(fail, 'arena', v)
    const buffer = r.raw('buffer')
    if (!(buffer instanceof SharedArrayBuffer)) return r.reject('buffer', 'expected a SharedArrayBuffer')
    const parityStride = r.int('parityStride', 0, Math.floor(buffer.byteLength / 8))
    const slots = r.records('slots', MAX_ARENA_SLOTS, (s): ArenaSlot => {
      const slot = { name: s.string('name', MAX_VALUE_NAME_LENGTH), width: s.int('width', 1, MAX_SLOT_DIM), rows: s.int('rows', 1, MAX_SLOT_DIM) }
      const offset = s.int('offset', 0, parityStride)
      if (offset + slot.rows * slot.width > parityStride) s.reject('offset', `slot ${slot.name} lies outside its parity stride`)
      return { ...slot, aliases: s.strings('aliases', MAX_ARENA_SLOTS, MAX_VALUE_NAME_LENGTH), offset }
    })
    return new ValueArena({ slots, parityStride, buffer })
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
  const fail = failWith((message) => new RangeError(message))
  readString(fail, 'arena value name', s.name, MAX_VALUE_NAME_LENGTH)
  readInteger(fail, `arena value ${s.name}: width`, s.width, 1, MAX_SLOT_DIM)
  readInteger(fail, `arena value ${s.name}: rows`, s.rows, 1, MAX_SLOT_DIM)
}

/** Parity of chunk `c`. */
export function parityOf(chunk: number): Parity {
  return chunk % 2 === 0 ? 0 : 1
}
