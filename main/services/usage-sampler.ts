/**
 * @file The live utilization view's data: a sample every API_LIMITS.usageIntervalMs (250 ms) while a
 * generation runs and every USAGE_IDLE_INTERVAL_MS when idle, each with per-device busy % (from the open
 * model worker's cumulative busy time), whole-system CPU % (from os.cpus() time deltas) and tokens/s (tokens the
 * chat streamed over the interval). A ring buffer keeps the last API_LIMITS.usageWindowMs (60 s).
 */
import { cpus } from 'node:os'
import { API_LIMITS, type UsageSample } from '../../preload/api'

/** Sample interval while nothing is generating (ms): the chart keeps moving without waking 4×/s. */
export const USAGE_IDLE_INTERVAL_MS = 1000

/** Most samples kept: a full window at the fast rate, plus the one at its edge. */
export const MAX_USAGE_SAMPLES = Math.ceil(API_LIMITS.usageWindowMs / API_LIMITS.usageIntervalMs) + 1

/** Cumulative busy time of the open model worker's devices, as `ModelWorkerClient.usage()` reports it. */
export interface WorkerUsage {
  /** when the counters were last updated (ms, the worker's clock) */
  readonly atMs: number
  readonly devices: readonly { readonly id: string; readonly busyMs: number }[]
}

/** What the sampler reads each tick (ChatService provides it). */
export interface UsageReading {
  /** the open model worker's counters; `owner` identifies it (a new worker restarts its counters at 0); null when none is open */
  readonly worker: { readonly owner: object; readonly usage: WorkerUsage } | null
  /** tokens streamed by all generations so far (monotonic) */
  readonly tokens: number
  /** true while a generation is running */
  readonly generating: boolean
}

/** CPU time counters of one logical core (os.cpus()[i].times, ms). */
export interface CoreTimes {
  readonly user: number
  readonly nice: number
  readonly sys: number
  readonly idle: number
  readonly irq: number
}

/** Inputs of the sampler; clocks and CPU counters can be replaced (tests drive it deterministically). */
export interface UsageSamplerOptions {
  readonly read: () => UsageReading
  /** device ids to list in every sample (ready devices, in list order); devices the worker reports are added */
  readonly deviceIds: () => readonly string[]
  /** epoch ms stamped on samples (default Date.now) */
  readonly nowMs?: () => number
  /** monotonic ms for interval lengths (default performance.now) */
  readonly monotonicMs?: () => number
  /** per-core CPU times (default os.cpus()) */
  readonly cpuTimes?: () => readonly CoreTimes[]
}

/** The counters one sample is a delta against. */
interface Baseline {
  readonly monoMs: number
  readonly tokens: number
  readonly cpuBusyMs: number
  readonly cpuTotalMs: number
  readonly owner: object | null
  readonly worker: WorkerUsage | null
}

const clampPercent = (x: number): number => (Number.isFinite(x) ? Math.min(100, Math.max(0, x)) : 0)

function cpuTotals(times: readonly CoreTimes[]): { busy: number; total: number } {
  let busy = 0
  let total = 0
  for (const t of times) {
    const b = t.user + t.nice + t.sys + t.irq
    busy += b
    total += b + t.idle
  }
  return { busy, total }
}

/** Samples utilization on a timer (start/stop) or on demand (sample). */
export class UsageSampler {
  private readonly ring: (UsageSample | undefined)[] = new Array<UsageSample | undefined>(MAX_USAGE_SAMPLES)
  /** index of the next write; `count` samples end just before it */
  private next = 0
  private count = 0
  private base: Baseline | null = null
  /** last busy % per device, repeated while the worker's counters have not moved its counters since */
  private lastPercent = new Map<string, number>()
  private timer: NodeJS.Timeout | null = null
  private running = false
  private readonly nowMs: () => number
  private readonly monotonicMs: () => number
  private readonly cpuTimes: () => readonly CoreTimes[]

  constructor(private readonly options: UsageSamplerOptions) {
    this.nowMs = options.nowMs ?? Date.now
    this.monotonicMs = options.monotonicMs ?? (() => performance.now())
    this.cpuTimes = options.cpuTimes ?? (() => cpus().map((c) => c.times))
  }

  /** Starts sampling on a timer (unref'd: it never keeps the process alive). */
  start(): void {
    if (this.running) return
    this.running = true
    this.base ??= this.baseline(this.options.read())
    this.schedule(USAGE_IDLE_INTERVAL_MS)
  }

  /** Stops the timer; samples taken so far stay readable. */
  stop(): void {
    this.running = false
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = null
  }

  /** A generation started: switch to the fast rate now instead of at the next idle tick. */
  poke(): void {
    if (this.running) this.schedule(API_LIMITS.usageIntervalMs)
  }

  /** Samples newer than `sinceMs` (epoch ms) within the window, oldest first. */
  samples(sinceMs: number): UsageSample[] {
    const out: UsageSample[] = []
    const oldest = this.nowMs() - API_LIMITS.usageWindowMs
    for (let i = 0; i < this.count; i++) {
      const s = this.ring[(this.next - this.count + i + MAX_USAGE_SAMPLES) % MAX_USAGE_SAMPLES]
      if (s !== undefined && s.atMs > sinceMs && s.atMs >= oldest) out.push(s)
    }
    return out
  }

  /** Takes one sample now (the delta since the previous one, or since start) and stores it. */
  sample(): UsageSample {
    const reading = this.options.read()
    const base = this.base ?? this.baseline(reading)
    const now = this.baseline(reading)
    const wallMs = now.monoMs - base.monoMs
    const sample: UsageSample = {
      atMs: this.nowMs(),
      devices: this.devicePercents(reading, base, now),
      systemCpuPercent: now.cpuTotalMs > base.cpuTotalMs ? clampPercent((100 * (now.cpuBusyMs - base.cpuBusyMs)) / (now.cpuTotalMs - base.cpuTotalMs)) : 0,
      tokensPerSecond: wallMs > 0 ? Math.max(0, ((now.tokens - base.tokens) * 1000) / wallMs) : 0
    }
    this.base = now
    this.ring[this.next] = sample
    this.next = (this.next + 1) % MAX_USAGE_SAMPLES
    this.count = Math.min(this.count + 1, MAX_USAGE_SAMPLES)
    return sample
  }

  /**
   * Busy % per device: Δ busy ms / Δ ms between the two readings' own times (the board is read live, a run in
   * progress counted up to the reading), clamped to 0..100. When no time passed between the readings the
   * previous value is repeated while generating, so the series does not flicker to 0. A new model worker
   * only sets the baseline (its counters start at 0).
   */
  private devicePercents(reading: UsageReading, base: Baseline, now: Baseline): UsageSample['devices'] {
    const ids = [...this.options.deviceIds()]
    for (const d of now.worker?.devices ?? []) if (!ids.includes(d.id)) ids.push(d.id)
    const sameWorker = now.owner !== null && now.owner === base.owner && base.worker !== null && now.worker !== null
    const spanMs = sameWorker && now.worker !== null && base.worker !== null ? now.worker.atMs - base.worker.atMs : 0
    const percents = new Map<string, number>()
    for (const id of ids) {
      let p = 0
      if (sameWorker && spanMs > 0) {
        const busyNow = now.worker?.devices.find((d) => d.id === id)?.busyMs ?? 0
        const busyBefore = base.worker?.devices.find((d) => d.id === id)?.busyMs ?? 0
        p = clampPercent((100 * (busyNow - busyBefore)) / spanMs)
      } else if (sameWorker && reading.generating) {
        p = this.lastPercent.get(id) ?? 0
      }
      percents.set(id, p)
    }
    this.lastPercent = percents
    return ids.map((id) => ({ id, busyPercent: percents.get(id) ?? 0 }))
  }

  private baseline(reading: UsageReading): Baseline {
    const cpu = cpuTotals(this.cpuTimes())
    return {
      monoMs: this.monotonicMs(),
      tokens: reading.tokens,
      cpuBusyMs: cpu.busy,
      cpuTotalMs: cpu.total,
      owner: reading.worker?.owner ?? null,
      worker: reading.worker === null ? null : { atMs: reading.worker.usage.atMs, devices: reading.worker.usage.devices.map((d) => ({ ...d })) }
    }
  }

  private schedule(delayMs: number): void {
    if (this.timer !== null) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = null
      if (!this.running) return
      let generating = false
      try {
        this.sample()
        generating = this.options.read().generating
      } catch (err) {
        // a sampling failure must not stop the chart for good, nor crash the app
        process.stderr.write(`tandem: usage sample failed: ${err instanceof Error ? err.message : String(err)}\n`)
      }
      this.schedule(generating ? API_LIMITS.usageIntervalMs : USAGE_IDLE_INTERVAL_MS)
    }, delayMs)
    this.timer.unref()
  }
}
