/**
 * @file Per-device busy time, shared live between threads: a small Float64Array over a SharedArrayBuffer
 * ([busyMs, runs, startedAtMs] per device slot), written by whichever thread runs a device's work (a
 * device worker, or the model worker on the single-session fast path) and read by the model worker's client on the
 * caller's thread at any moment — no messages. A task in progress counts up to the moment of the reading
 * (startedAtMs is its start, 0 when idle), so a long prefill run shows as busy while it runs.
 */

/** Cumulative busy time per device since the model worker started. */
export interface DeviceUsage {
  /** when this reading was taken: ms since the Unix epoch (comparable across threads) */
  readonly atMs: number
  readonly devices: readonly { readonly id: string; readonly busyMs: number; readonly runs: number }[]
}

/** Most devices one model worker reports (slots in the usage board). */
export const MAX_USAGE_DEVICES = 16

/** Float64 values per device slot: busy ms of finished tasks, task count, start of the running task (epoch ms, 0 = idle). */
const SLOT_VALUES = 3

/** Wall-clock now in epoch ms with sub-ms precision, the same clock on every thread. */
export function epochNowMs(): number {
  return performance.timeOrigin + performance.now()
}

/** A shared board of [busyMs, runs, startedAtMs] counters, one slot per device. */
export class UsageBoard {
  private readonly values: Float64Array

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(MAX_USAGE_DEVICES * SLOT_VALUES * 8)) {
    if (buffer.byteLength !== MAX_USAGE_DEVICES * SLOT_VALUES * 8) throw new RangeError(`usage board must be ${MAX_USAGE_DEVICES * SLOT_VALUES * 8} bytes, got ${buffer.byteLength}`)
    this.values = new Float64Array(buffer)
  }

  /** Marks a task started on slot `index` (it counts as busy from now until `add`). Only one thread writes a slot. */
  start(index: number): void {
    checkSlot(index)
    this.values[index * SLOT_VALUES + 2] = epochNowMs()
  }

  /** Adds one finished task of `busyMs` to slot `index` and marks the slot idle. */
  add(index: number, busyMs: number, runs = 1): void {
    checkSlot(index)
    this.values[index * SLOT_VALUES] += busyMs
    this.values[index * SLOT_VALUES + 1] += runs
    this.values[index * SLOT_VALUES + 2] = 0
  }

  /** Runs `work` as one task on slot `index`: busy from its start (visible live) until it settles, failed or not. */
  async timed<T>(index: number, work: () => Promise<T>): Promise<T> {
    const t0 = performance.now()
    this.start(index)
    try {
      return await work()
    } finally {
      this.add(index, performance.now() - t0)
    }
  }

  /** Busy ms of slot `index` up to now (a running task counted so far). */
  busyMs(index: number, nowMs = epochNowMs()): number {
    checkSlot(index)
    const startedAt = this.values[index * SLOT_VALUES + 2]
    return this.values[index * SLOT_VALUES] + (startedAt > 0 ? Math.max(0, nowMs - startedAt) : 0)
  }

  /** A reading for devices `ids` (slot i = ids[i]). */
  read(ids: readonly string[]): DeviceUsage {
    if (ids.length > MAX_USAGE_DEVICES) throw new RangeError(`at most ${MAX_USAGE_DEVICES} devices, got ${ids.length}`)
    const atMs = epochNowMs()
    return { atMs, devices: ids.map((id, i) => ({ id, busyMs: this.busyMs(i, atMs), runs: this.values[i * SLOT_VALUES + 1] })) }
  }
}

function checkSlot(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_USAGE_DEVICES) throw new RangeError(`usage slot ${index} is outside [0, ${MAX_USAGE_DEVICES})`)
}

/** Busy ms and runs per device between two readings of the same worker (devices missing from `before` count from 0). */
export function usageDelta(before: DeviceUsage, after: DeviceUsage): { id: string; busyMs: number; runs: number }[] {
  return after.devices.map((d) => {
    const was = before.devices.find((b) => b.id === d.id)
    return { id: d.id, busyMs: Math.max(0, d.busyMs - (was?.busyMs ?? 0)), runs: Math.max(0, d.runs - (was?.runs ?? 0)) }
  })
}
