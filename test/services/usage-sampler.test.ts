/**
 * The live utilization sampler: its arithmetic driven by scripted clocks and counters (busy % over the
 * runner's own interval, system CPU % from core-time deltas, tokens/s, the 60 s window and `sinceMs`), its
 * timer rates, and then a real generation on stories260K through the app.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { API_LIMITS, type DeviceView, type Message, type PlacementView, type UsageSample } from '../../preload/api'
import { MAX_USAGE_SAMPLES, USAGE_IDLE_INTERVAL_MS, UsageSampler, type CoreTimes, type UsageReading } from '../../main/services'
import { appFixture, streamCall, type AppFixture } from './app-fixture'

/** A sampler over counters the test moves by hand. */
function scripted() {
  const state = {
    epochMs: 1_000_000,
    monoMs: 0,
    busy: { user: 0, idle: 0 },
    reading: { worker: null, tokens: 0, generating: false } as UsageReading
  }
  const core = (): CoreTimes => ({ user: state.busy.user, nice: 0, sys: 0, idle: state.busy.idle, irq: 0 })
  const sampler = new UsageSampler({
    read: () => state.reading,
    deviceIds: () => ['cpu', 'webgpu-0'],
    nowMs: () => state.epochMs,
    monotonicMs: () => state.monoMs,
    cpuTimes: () => [core(), core()]
  })
  const advance = (ms: number): void => {
    state.epochMs += ms
    state.monoMs += ms
  }
  return { state, sampler, advance }
}

describe('UsageSampler arithmetic', () => {
  it('reports busy % per device over the runner interval, system CPU %, and tokens/s', () => {
    const { state, sampler, advance } = scripted()
    const owner = {}
    state.reading = { worker: { owner, usage: { atMs: 0, devices: [{ id: 'cpu', busyMs: 0 }] } }, tokens: 0, generating: true }
    sampler.sample() // baseline
    advance(250)
    state.busy = { user: 150, idle: 100 }
    state.reading = { worker: { owner, usage: { atMs: 250, devices: [{ id: 'cpu', busyMs: 200 }, { id: 'webgpu-0', busyMs: 50 }] } }, tokens: 10, generating: true }
    const s = sampler.sample()
    expect(s.atMs).toBe(1_000_250)
    expect(s.devices).toEqual([
      { id: 'cpu', busyPercent: 80 },
      { id: 'webgpu-0', busyPercent: 20 }
    ])
    expect(s.systemCpuPercent).toBeCloseTo(60)
    expect(s.tokensPerSecond).toBeCloseTo(40)
  })

  it('clamps to 0..100 and starts a new runner from a fresh baseline', () => {
    const { state, sampler, advance } = scripted()
    const first = {}
    state.reading = { worker: { owner: first, usage: { atMs: 0, devices: [{ id: 'cpu', busyMs: 0 }] } }, tokens: 0, generating: true }
    sampler.sample()
    advance(100)
    // a long task finished inside a short interval: its whole busy time lands at once
    state.reading = { worker: { owner: first, usage: { atMs: 100, devices: [{ id: 'cpu', busyMs: 400 }] } }, tokens: 0, generating: true }
    expect(sampler.sample().devices[0]).toEqual({ id: 'cpu', busyPercent: 100 })
    advance(100)
    // a new runner restarts its counters at 0: no negative or bogus percentage
    state.reading = { worker: { owner: {}, usage: { atMs: 200, devices: [{ id: 'cpu', busyMs: 5 }] } }, tokens: 0, generating: true }
    expect(sampler.sample().devices[0]).toEqual({ id: 'cpu', busyPercent: 0 })
  })

  it('lists the known devices at 0 % when no model is open, and adds devices only the runner reports', () => {
    const { state, sampler, advance } = scripted()
    sampler.sample()
    advance(1000)
    expect(sampler.sample()).toMatchObject({ devices: [{ id: 'cpu', busyPercent: 0 }, { id: 'webgpu-0', busyPercent: 0 }], tokensPerSecond: 0 })
    const owner = {}
    state.reading = { worker: { owner, usage: { atMs: 0, devices: [{ id: 'cpu-2', busyMs: 0 }] } }, tokens: 0, generating: true }
    sampler.sample()
    expect(sampler.sample().devices.map((d) => d.id)).toEqual(['cpu', 'webgpu-0', 'cpu-2'])
  })

  it('keeps the last 60 s and returns only samples newer than sinceMs', () => {
    const { sampler, advance } = scripted()
    const taken: UsageSample[] = []
    for (let i = 0; i < 400; i++) {
      advance(API_LIMITS.usageIntervalMs)
      taken.push(sampler.sample())
    }
    const all = sampler.samples(0)
    expect(all.length).toBeLessThanOrEqual(MAX_USAGE_SAMPLES)
    expect(all[all.length - 1]).toBe(taken[taken.length - 1])
    expect(all[all.length - 1].atMs - all[0].atMs).toBeLessThanOrEqual(API_LIMITS.usageWindowMs)
    const since = taken[taken.length - 4].atMs
    expect(sampler.samples(since)).toEqual(taken.slice(-3))
  })
})

describe('UsageSampler timer', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('samples every 250 ms while generating (from the poke on), every second when idle, and stops', () => {
    vi.useFakeTimers()
    const { state, sampler } = scripted()
    sampler.start()
    vi.advanceTimersByTime(USAGE_IDLE_INTERVAL_MS * 2)
    expect(sampler.samples(0)).toHaveLength(2)
    state.reading = { worker: null, tokens: 0, generating: true }
    sampler.poke()
    vi.advanceTimersByTime(1000)
    expect(sampler.samples(0)).toHaveLength(2 + 1000 / API_LIMITS.usageIntervalMs)
    sampler.stop()
    vi.advanceTimersByTime(5000)
    expect(sampler.samples(0)).toHaveLength(6)
  })
})

describe('usage during a real generation (stories260K, CPU fast path)', () => {
  let f: AppFixture
  beforeAll(() => {
    f = appFixture()
    // Samples are taken on demand only, every so many deltas: each then covers exactly the forwards between
    // two of them, however fast they ran. (The timer's rates are checked above with fake timers; a timer
    // sample landing just before an on-demand one could leave it an empty interval.)
    f.app.usage.stop()
  })
  afterAll(() => f.dispose())

  it('shows the cpu busy and tokens/s above 0 while generating, and records the devices in the stats', async () => {
    const conversation = await f.conversation(200)
    const during: UsageSample[] = []
    let deltas = 0
    const { outcome } = await streamCall(f.app, 'chat:send', { requestId: 'usage-1', conversationId: conversation.id, content: 'Once upon a time' }, (e) => {
      if (e.type !== 'delta') return
      deltas++
      // sample on demand mid-stream (the timer's 250 ms may outlast a tiny model's reply)
      if (deltas % 20 === 0) during.push(f.app.usage.sample())
    })
    expect(outcome.ok).toBe(true)
    expect(during.length).toBeGreaterThan(1)
    expect(during.some((s) => (s.devices.find((d) => d.id === 'cpu')?.busyPercent ?? 0) > 0)).toBe(true)
    expect(during.some((s) => s.tokensPerSecond > 0)).toBe(true)
    expect(during.every((s) => s.systemCpuPercent >= 0 && s.systemCpuPercent <= 100)).toBe(true)
    const usage = await f.ok<UsageSample[]>('devices:usage', during[0].atMs - 1)
    expect(usage.length).toBeGreaterThanOrEqual(during.length)
    const message = outcome.ok ? (outcome.result as Message) : null
    expect(message?.stats?.devices).toEqual([expect.stringMatching(/^CPU/)])
    expect(message?.stats?.deviceBusy).toEqual([{ id: 'cpu', name: expect.stringMatching(/^CPU/), busyMs: expect.any(Number) }])
    expect(message?.stats?.deviceBusy?.[0].busyMs).toBeGreaterThan(0)
  })

  it('applies a split placement to the next reply without a restart, and both devices show busy time', async ({ skip }) => {
    const devices = await f.ok<DeviceView[]>('devices:list')
    const gpu = devices.find((d) => d.id === 'webgpu-0')
    skip(gpu?.status !== 'ready', `needs the GPU device webgpu-0, which is ${gpu === undefined ? 'not listed on this machine' : `${gpu.status}: ${gpu.reason ?? 'no reason given'}`}`)
    const view = await f.ok<PlacementView>('devices:setPlacement', { preset: 'layer-split' })
    const used = new Set([view.resolved?.phases.decode.device, ...(view.resolved?.phases.decode.groups.map((g) => g.device) ?? [])])
    expect([...used].sort()).toEqual(['cpu', 'webgpu-0'])
    const conversation = await f.conversation(60)
    const during: UsageSample[] = []
    let deltas = 0
    const { outcome } = await streamCall(f.app, 'chat:send', { requestId: 'usage-2', conversationId: conversation.id, content: 'Once upon a time' }, (e) => {
      if (e.type === 'delta' && ++deltas % 10 === 0) during.push(f.app.usage.sample())
    })
    expect(outcome.ok).toBe(true)
    const busiest = (id: string): number => Math.max(0, ...during.map((s) => s.devices.find((d) => d.id === id)?.busyPercent ?? 0))
    expect(busiest('cpu')).toBeGreaterThan(0)
    expect(busiest('webgpu-0')).toBeGreaterThan(0)
    const stats = outcome.ok ? (outcome.result as Message).stats : null
    expect(stats?.deviceBusy?.map((d) => d.id).sort()).toEqual(['cpu', 'webgpu-0'])
    expect(stats?.deviceBusy?.every((d) => d.busyMs > 0)).toBe(true)
    expect(stats?.devices).toContain(devices.find((d) => d.id === 'webgpu-0')?.name)
  }, 180_000)
})
