/**
 * @file What a device worker holds and does: its ORT sessions (every session of a device lives on this one
 * thread — two WebGPU sessions on two threads crash the process), its registered programs, and the KV
 * cache of every layer whose attention it runs in some phase. A graph program copies its inputs out of the
 * value arena into buffers it owns (ORT rejects SharedArrayBuffer-backed tensors), passes its layers'
 * cache buffers as inputs (free), runs, copies the outputs into their arena slots, and appends its layers'
 * new K/V rows to its cache. Time spent per task (copies + run) goes to the shared usage board. A static-shape
 * graph (an NPU's) always runs its fixed number of rows: a shorter chunk is padded with zero rows in front —
 * the row-wise groups such a device runs (norms, matmuls) never mix them into the real rows, and the final
 * norm's "last row" stays a real one — and only the real rows of its outputs are kept.
 */
import { createDeviceSession, float32Tensor, int64Tensor, tensorFloat32Data, type OrtSession, type OrtTensor } from '../../devices'
import { KV_OUTPUT, VALUE } from '../../graph'
import type { DeviceWorkerInit, DeviceProgram, GraphProgram, OutputRoute } from './device-protocol'
import { parseDeviceMessage } from './device-protocol'
import { medianRunMs } from './session-timing'
import { KvCache } from '../session/kv-cache'
import { UsageBoard } from '../usage'
import type { Parity, ValueArena } from './value-arena'

/** One arena-fed graph input with its own ordinary buffer (max rows × width) and cached tensor. */
interface ArenaFeed {
  readonly source: 'arena'
  readonly input: string
  readonly slot: number
  readonly width: number
  /** 1 for last-row values (final_in); else the chunk's rows */
  readonly oneRow: boolean
  /** max(rows of the slot, the graph's static rows) × width */
  readonly buffer: Float32Array
  tensor: OrtTensor | null
  tensorRows: number
}

interface PositionsFeed {
  readonly source: 'positions'
  readonly input: string
  readonly buffer: BigInt64Array
  tensor: OrtTensor | null
  tensorRows: number
}

interface CacheFeed {
  readonly source: 'past-k' | 'past-v'
  readonly input: string
  readonly layer: number
  tensor: OrtTensor | null
  tensorBuffer: Float32Array | null
}

type Feed = ArenaFeed | PositionsFeed | CacheFeed

/** A graph program bound to its session, arena slots and caches. */
interface BoundGraph {
  readonly kind: 'graph'
  readonly label: string
  readonly program: GraphProgram
  readonly session: OrtSession
  /** the rows every run of a static-shape graph has; null for a dynamic graph */
  readonly staticRows: number | null
  readonly feeds: readonly Feed[]
  readonly outputs: ReadonlyArray<{ readonly output: string; readonly slot: number; readonly start: number }>
  /** per packed value: its arena slot, or -1 when it only feeds this worker's cache (`local`) */
  readonly kv: ReadonlyArray<{ readonly value: string; readonly slot: number; readonly start: number }>
  /** per run: the rows of each local packed value, views into the graph's output */
  readonly localRows: Map<string, Float32Array>
  /** layers whose attention this graph runs (it reads their past_k/past_v) */
  readonly layers: readonly number[]
  readonly record: Record<string, OrtTensor>
}

type Bound = BoundGraph | { readonly kind: 'sum'; readonly label: string; readonly target: number; readonly partial: number } | { readonly kind: 'append'; readonly label: string; readonly layer: number }

const PAST = /^past_([kv])_(\d+)$/

/** The state of one device worker. */
export class DeviceExecutor {
  private readonly sessions = new Map<string, { readonly session: OrtSession; readonly staticRows: number | null }>()
  private readonly programs: (Bound | undefined)[] = []
  private readonly caches = new Map<number, KvCache>()
  private readonly usage: UsageBoard
  /** most rows any arena value has: the longest run (positions buffers are this long) */
  private readonly maxRows: number
  /** the worker's side of an echo (see `echo`) */
  private echoBuffer = new Float32Array(0)

  constructor(
    private readonly init: DeviceWorkerInit,
    private readonly arena: ValueArena
  ) {
    this.usage = new UsageBoard(init.usage)
    let rows = 1
    for (let i = 0; i < arena.size; i++) rows = Math.max(rows, arena.slot(i).rows)
    this.maxRows = rows
  }

  /** Applies one port message (validated here); a 'measure' returns the median run ms, a 'kv-read' the bytes, the others nothing. */
  async apply(raw: unknown): Promise<number | Uint8Array | null> {
    const m = parseDeviceMessage(raw)
    switch (m.type) {
      case 'session': {
        if (this.sessions.has(m.key)) return null
        try {
          // devices here share cores: a session's idle threads must sleep, not spin, between its tasks
          const session = await createDeviceSession(m.model, { ep: this.init.ep, cpuFallback: false, intraOpThreads: this.init.threads, allowSpinning: false, providerOptions: this.init.providerOptions })
          this.sessions.set(m.key, { session, staticRows: m.staticRows })
        } catch (err) {
          throw new Error(`device ${this.init.deviceId} (${this.init.ep}) cannot open the graph for ${m.label}: ${err instanceof Error ? err.message : String(err)}`)
        }
        return null
      }
      case 'release': {
        const entry = this.sessions.get(m.key)
        this.sessions.delete(m.key)
        await entry?.session.release()
        return null
      }
      case 'kv':
        for (const l of m.layers) if (!this.caches.has(l)) this.caches.set(l, new KvCache({ nLayers: 1, ...this.init.kv }))
        return null
      case 'program':
        this.programs[m.id] = this.bind(m.program)
        return null
      case 'kv-read':
        return this.cache(m.layer, 'a KV snapshot').readSnapshot(m.start, m.count, m.format)
      case 'kv-write': {
        const c = this.cache(m.layer, 'a KV snapshot')
        if (m.start > c.length) throw new RangeError(`layer ${m.layer}'s cache holds ${c.length} positions, not ${m.start}`)
        const maxLen = this.init.kv.maxLen
        if (m.start + m.count > maxLen) throw new RangeError(`cannot write ${m.count} KV positions at ${m.start} (context ${maxLen})`)
        c.truncate(m.start)
        c.reserve(Math.min(maxLen, Math.max(m.start + m.count, m.reserve)))
        c.writeSnapshot(m.data, m.count, m.format)
        return null
      }
      case 'measure': {
        const entry = this.sessions.get(m.request.session)
        if (!entry) throw new Error(`device ${this.init.deviceId}: no session ${m.request.session} to time`)
        return medianRunMs(entry.session, m.request)
      }
    }
  }

  /** Copies `floats` values of arena slot `slot` out into a buffer of this worker's and back (a hand-off's two copies). */
  echo(slot: number, floats: number): void {
    const view = this.arena.view(slot, 0)
    if (!Number.isInteger(floats) || floats < 0 || floats > view.length) throw new RangeError(`echo of ${floats} floats outside slot ${slot} (${view.length})`)
    if (this.echoBuffer.length < floats) this.echoBuffer = new Float32Array(view.length)
    this.echoBuffer.set(view.subarray(0, floats))
    view.set(this.echoBuffer.subarray(0, floats))
  }

  private bind(p: DeviceProgram): Bound {
    if (p.kind === 'sum') return { kind: 'sum', label: p.label, target: this.arena.slotIndex(p.target), partial: this.arena.slotIndex(p.partial) }
    if (p.kind === 'append') {
      this.cache(p.layer, p.label)
      this.arena.slotIndex(VALUE.newK(p.layer))
      this.arena.slotIndex(VALUE.newV(p.layer))
      return { kind: 'append', label: p.label, layer: p.layer }
    }
    const entry = this.sessions.get(p.session)
    if (!entry) throw new Error(`${p.label}: no session ${p.session} on this device`)
    const { session, staticRows } = entry
    const maxRows = Math.max(this.maxRows, staticRows ?? 0)
    const layers: number[] = []
    const feeds: Feed[] = session.inputNames.map((input): Feed => {
      if (input === VALUE.positions) return { source: 'positions', input, buffer: new BigInt64Array(maxRows), tensor: null, tensorRows: -1 }
      const past = PAST.exec(input)
      if (past) {
        const layer = Number(past[2])
        this.cache(layer, p.label)
        if (!layers.includes(layer)) layers.push(layer)
        return { source: past[1] === 'k' ? 'past-k' : 'past-v', input, layer, tensor: null, tensorBuffer: null }
      }
      const slot = this.arena.indexOf(input)
      if (slot < 0) throw new Error(`${p.label}: graph input ${input} has no arena slot`)
      const s = this.arena.slot(slot)
      const rows = s.rows === 1 ? 1 : Math.max(s.rows, staticRows ?? 0)
      return { source: 'arena', input, slot, width: s.width, oneRow: s.rows === 1, buffer: new Float32Array(rows * s.width), tensor: null, tensorRows: -1 }
    })
    const outputs = session.outputNames
      .filter((o) => o !== KV_OUTPUT)
      .map((output) => {
        const r: OutputRoute | undefined = p.outputs[output]
        if (r === undefined) throw new Error(`${p.label}: graph output ${output} has no route`)
        return { output, slot: this.arena.slotIndex(r.value), start: r.start }
      })
    if (session.outputNames.includes(KV_OUTPUT) !== p.kv.length > 0) throw new Error(`${p.label}: the graph's ${KV_OUTPUT} output and the program's kv routes disagree`)
    const kv = p.kv.map((r) => ({ value: r.value, slot: p.local.includes(r.value) ? -1 : this.arena.slotIndex(r.value), start: r.start }))
    for (const l of layers) {
      for (const v of [VALUE.newK(l), VALUE.newV(l)]) {
        // a local value must come from this graph's own output; anything else from the arena
        if (p.local.includes(v) ? !kv.some((r) => r.value === v) : this.arena.indexOf(v) < 0) throw new Error(`${p.label}: no source for ${v}`)
      }
    }
    return { kind: 'graph', label: p.label, program: p, session, staticRows, feeds, outputs, kv, layers, record: {}, localRows: new Map() }
  }

  private cache(layer: number, label: string): KvCache {
    const c = this.caches.get(layer)
    if (!c) throw new Error(`${label}: this device does not hold layer ${layer}'s KV cache`)
    return c
  }

  /** Runs program `id` for a chunk of `tokens` tokens starting at position `pos`; records the busy time. */
  async run(id: number, parity: Parity, tokens: number, pos: number): Promise<void> {
    const p = this.programs[id]
    if (!p) throw new Error(`device ${this.init.deviceId}: no program ${id}`)
    if (!Number.isInteger(tokens) || tokens < 1 || tokens > this.maxRows) throw new RangeError(`${p.label}: ${tokens} tokens outside [1, ${this.maxRows}]`)
    if (!Number.isInteger(pos) || pos < 0 || pos + tokens > this.init.kv.maxLen) throw new RangeError(`${p.label}: position ${pos} + ${tokens} tokens is outside the context ${this.init.kv.maxLen}`)
    await this.usage.timed(this.init.usageSlot, async () => {
      try {
        if (p.kind === 'graph') await this.runGraph(p, parity, tokens, pos)
        else if (p.kind === 'sum') this.sum(p.target, p.partial, parity, tokens)
        else this.append(p.layer, parity, tokens, pos, p.label)
      } catch (err) {
        throw new Error(`device ${this.init.deviceId} failed running ${p.label}: ${err instanceof Error ? err.message : String(err)}`)
      }
    })
  }

  private async runGraph(g: BoundGraph, parity: Parity, tokens: number, pos: number): Promise<void> {
    const start = Math.min(tokens, g.program.tokenStart)
    const count = g.program.tokenCount === null ? tokens - start : Math.min(g.program.tokenCount, tokens - start)
    if (count <= 0) return
    if (g.staticRows !== null && count > g.staticRows) throw new RangeError(`${g.label}: ${count} tokens exceed the graph's fixed ${g.staticRows}`)
    // the rows the graph computes: the chunk's, or the static graph's fixed count (real rows last)
    const runRows = g.staticRows ?? count
    for (const l of g.layers) this.openRows(l, pos, count)
    for (const f of g.feeds) this.feed(g.record, f, parity, start, count, pos, runRows)
    const out = await g.session.run(g.record)
    /** the last `count` of a run's `runRows` rows */
    const realRows = (data: Float32Array): Float32Array => (runRows === count ? data : data.subarray((data.length / runRows) * (runRows - count)))
    for (const o of g.outputs) {
      const t = out[o.output]
      if (!t) throw new Error(`graph did not return ${o.output}`)
      const data = tensorFloat32Data(t, o.output)
      this.store(this.arena.slot(o.slot).rows === 1 ? data : realRows(data), o.slot, o.start, parity, start, count)
    }
    if (g.kv.length > 0) {
      const t = out[KV_OUTPUT]
      if (!t) throw new Error(`graph did not return ${KV_OUTPUT}`)
      const packed = tensorFloat32Data(t, KV_OUTPUT)
      // [count values, S, width]: each packed value is one contiguous block
      const block = packed.length / g.kv.length
      g.kv.forEach((r, i) => {
        const rows = realRows(packed.subarray(i * block, (i + 1) * block))
        if (r.slot < 0) g.localRows.set(r.value, rows)
        else this.store(rows, r.slot, r.start, parity, start, count)
      })
    }
    for (const l of g.layers) this.commitRows(l, parity, count, g.localRows)
    g.localRows.clear()
  }

  /** Rewinds layer `l`'s cache to `pos` (a rewind after regenerate) and makes room for `count` more rows. */
  private openRows(l: number, pos: number, count: number): void {
    const c = this.cache(l, `layer ${l}`)
    if (c.length < pos) throw new Error(`layer ${l}'s cache holds ${c.length} positions but the run starts at ${pos}`)
    c.truncate(pos)
    c.reserve(pos + count)
  }

  /** Appends rows [0, count) of new_k_l / new_v_l (from `local`, this run's own output, or the arena) to layer l's cache. */
  private commitRows(l: number, parity: Parity, count: number, local: ReadonlyMap<string, Float32Array> | null = null): void {
    const c = this.cache(l, `layer ${l}`)
    const n = count * c.rowValues
    const rows = (name: string): Float32Array => local?.get(name) ?? this.arena.view(this.arena.slotIndex(name), parity).subarray(0, n)
    c.write(0, rows(VALUE.newK(l)), rows(VALUE.newV(l)), count)
    c.commit(count)
  }

  private append(l: number, parity: Parity, tokens: number, pos: number, label: string): void {
    this.cache(l, label)
    this.openRows(l, pos, tokens)
    this.commitRows(l, parity, tokens)
  }

  private sum(target: number, partial: number, parity: Parity, tokens: number): void {
    const s = this.arena.slot(target)
    const n = (s.rows === 1 ? 1 : tokens) * s.width
    const into = this.arena.view(target, parity)
    const from = this.arena.view(partial, parity)
    for (let i = 0; i < n; i++) into[i] += from[i]
  }

  /**
   * Binds one input for this run, copying arena rows [start, start + count) into the feed's own buffer; a
   * static graph's `runRows` > count puts them last, after zero rows (positions repeat the first real one).
   */
  private feed(record: Record<string, OrtTensor>, f: Feed, parity: Parity, start: number, count: number, pos: number, runRows: number): void {
    const pad = runRows - count
    if (f.source === 'positions') {
      for (let i = 0; i < runRows; i++) f.buffer[i] = BigInt(pos + start + Math.max(0, i - pad))
      if (f.tensorRows !== runRows || !f.tensor) {
        f.tensor = int64Tensor(f.buffer.subarray(0, runRows), [runRows])
        f.tensorRows = runRows
      }
      record[f.input] = f.tensor
      return
    }
    if (f.source === 'arena') {
      const rows = f.oneRow ? 1 : count
      const from = f.oneRow ? 0 : start
      const fed = f.oneRow ? 1 : runRows
      const front = fed - rows
      if (front > 0) f.buffer.fill(0, 0, front * f.width)
      f.buffer.set(this.arena.view(f.slot, parity).subarray(from * f.width, (from + rows) * f.width), front * f.width)
      if (f.tensorRows !== fed || !f.tensor) {
        f.tensor = float32Tensor(f.buffer.subarray(0, fed * f.width), [1, fed, f.width])
        f.tensorRows = fed
      }
      record[f.input] = f.tensor
      return
    }
    // the cache swaps in new buffers only when it grows
    const past = this.cache(f.layer, f.input).past(0)
    const data = f.source === 'past-k' ? past.keys : past.values
    if (f.tensorBuffer !== data || !f.tensor) {
      const { nKvHeads, headDim } = this.init.kv
      const cap = this.cache(f.layer, f.input).capacity
      f.tensor = float32Tensor(data, f.source === 'past-k' ? [nKvHeads, headDim, cap] : [nKvHeads, cap, headDim])
      f.tensorBuffer = data
    }
    record[f.input] = f.tensor
  }

  /** Writes an output [rows, width] into slot `slot` at rows from `start` (0 for last-row values) and features from `featureStart`. */
  private store(data: Float32Array, slot: number, featureStart: number, parity: Parity, start: number, count: number): void {
    const s = this.arena.slot(slot)
    const rows = s.rows === 1 ? 1 : count
    const width = data.length / rows
    if (!Number.isInteger(width) || featureStart + width > s.width) {
      throw new Error(`output of ${data.length} values does not fit ${rows} rows of ${s.name} (width ${s.width}) at feature ${featureStart}`)
    }
    const view = this.arena.view(slot, parity)
    const row0 = s.rows === 1 ? 0 : start
    if (width === s.width) {
      view.set(data, row0 * s.width)
      return
    }
    for (let r = 0; r < rows; r++) view.set(data.subarray(r * width, (r + 1) * width), (row0 + r) * s.width + featureStart)
  }

  /** Releases every session. */
  async dispose(): Promise<void> {
    const all = [...this.sessions.values()]
    this.sessions.clear()
    this.programs.length = 0
    await Promise.all(all.map((s) => s.session.release()))
  }
}
