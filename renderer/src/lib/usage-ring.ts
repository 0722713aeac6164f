/**
 * @file The live utilization view's memory: a fixed-capacity ring of `UsageSample`s covering the last
 * `windowMs` (60 s) of the app's clock. Polling asks for samples newer than the newest one held, so the ring
 * only ever appends; anything out of order or duplicated is dropped, and values are clamped, so one odd
 * sample cannot bend a chart. Pure (no DOM), so Vitest runs it.
 */
import { API_LIMITS, type UsageSample } from '../../../preload/api'

/** One point of a chart: when (ms, the app's clock) and the value (percent or tokens/s). */
export interface SeriesPoint {
  readonly atMs: number
  readonly value: number
}

/**
 * Most samples held: twice the window at the fastest sample rate (60 s / 250 ms = 240), so a sampler that
 * runs a little fast never pushes a sample of the window out early.
 */
export const MAX_USAGE_SAMPLES = 2 * Math.ceil(API_LIMITS.usageWindowMs / API_LIMITS.usageIntervalMs)

/** Highest tokens/s believed (a bad number must not flatten the chart): far above any local model. */
export const MAX_TOKENS_PER_SECOND = 1_000_000

const clamp = (value: number, max: number): number => (Number.isFinite(value) ? Math.min(max, Math.max(0, value)) : 0)

/** A sample with every number in range. */
function cleanSample(s: UsageSample): UsageSample {
  return {
    atMs: s.atMs,
    devices: s.devices.map((d) => ({ id: d.id, busyPercent: clamp(d.busyPercent, 100) })),
    systemCpuPercent: clamp(s.systemCpuPercent, 100),
    tokensPerSecond: clamp(s.tokensPerSecond, MAX_TOKENS_PER_SECOND)
  }
}

/** The last `windowMs` of usage samples, oldest first. */
export class UsageRing {
  private readonly slots: (UsageSample | undefined)[]
  /** index of the oldest sample */
  private head = 0
  private count = 0

  constructor(
    readonly windowMs: number = API_LIMITS.usageWindowMs,
    readonly capacity: number = MAX_USAGE_SAMPLES
  ) {
    if (!(windowMs > 0) || !Number.isInteger(capacity) || capacity < 1) throw new RangeError('UsageRing needs windowMs > 0 and capacity ≥ 1')
    this.slots = new Array<UsageSample | undefined>(capacity)
  }

  /** Number of samples held. */
  get size(): number {
    return this.count
  }

  /** Time of the newest sample (ms), or null when empty: the `sinceMs` of the next poll. */
  get latestAtMs(): number | null {
    return this.latest?.atMs ?? null
  }

  /** The newest sample, or null when empty. */
  get latest(): UsageSample | null {
    return this.count === 0 ? null : (this.slots[(this.head + this.count - 1) % this.capacity] ?? null)
  }

  /** Appends the samples newer than the newest held (others are dropped), then forgets what left the window. Returns how many were taken. */
  push(samples: readonly UsageSample[]): number {
    let taken = 0
    for (const raw of samples) {
      const last = this.latestAtMs
      if (!Number.isFinite(raw.atMs) || (last !== null && raw.atMs <= last)) continue
      const sample = cleanSample(raw)
      if (this.count === this.capacity) {
        this.head = (this.head + 1) % this.capacity
        this.count--
      }
      this.slots[(this.head + this.count) % this.capacity] = sample
      this.count++
      taken++
    }
    this.trim()
    return taken
  }

  /** Forgets everything (e.g. the app restarted and its clock no longer lines up). */
  clear(): void {
    this.slots.fill(undefined)
    this.head = 0
    this.count = 0
  }

  /** The samples held, oldest first. */
  samples(): UsageSample[] {
    const out: UsageSample[] = []
    for (let i = 0; i < this.count; i++) {
      const s = this.slots[(this.head + i) % this.capacity]
      if (s !== undefined) out.push(s)
    }
    return out
  }

  /** One device's busy percent over time; samples that do not mention the device are left out. */
  deviceSeries(deviceId: string): SeriesPoint[] {
    const out: SeriesPoint[] = []
    for (const s of this.samples()) {
      const d = s.devices.find((x) => x.id === deviceId)
      if (d !== undefined) out.push({ atMs: s.atMs, value: d.busyPercent })
    }
    return out
  }

  /** Whole-system CPU percent over time. */
  systemCpuSeries(): SeriesPoint[] {
    return this.samples().map((s) => ({ atMs: s.atMs, value: s.systemCpuPercent }))
  }

  /** Tokens/s over time. */
  tokensSeries(): SeriesPoint[] {
    return this.samples().map((s) => ({ atMs: s.atMs, value: s.tokensPerSecond }))
  }

  /** Device ids seen in any sample held, in first-seen order. */
  deviceIds(): string[] {
    const ids = new Set<string>()
    for (const s of this.samples()) for (const d of s.devices) ids.add(d.id)
    return [...ids]
  }

  /** Drops samples older than the window, measured back from the newest sample. */
  private trim(): void {
    const last = this.latestAtMs
    if (last === null) return
    while (this.count > 0) {
      const oldest = this.slots[this.head]
      if (oldest === undefined || oldest.atMs >= last - this.windowMs) break
      this.slots[this.head] = undefined
      this.head = (this.head + 1) % this.capacity
      this.count--
    }
  }
}

/** The largest value of a series, 0 when empty. */
export function peakOf(points: readonly SeriesPoint[]): number {
  let peak = 0
  for (const p of points) peak = Math.max(peak, p.value)
  return peak
}

/** The newest value of a series, 0 when empty. */
export function nowOf(points: readonly SeriesPoint[]): number {
  return points.at(-1)?.value ?? 0
}
