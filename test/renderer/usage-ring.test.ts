/**
 * @file The live view's sample ring and chart geometry (pure renderer code): only newer samples are taken,
 * the window and the capacity are kept, values are clamped, series are read per device, and the chart path
 * maps time and value onto the box and breaks at idle gaps.
 */
import { describe, expect, it } from 'vitest'
import type { UsageSample } from '../../preload/api'
import { chartPaths } from '../../renderer/src/lib/chart-path'
import { MAX_USAGE_SAMPLES, nowOf, peakOf, UsageRing } from '../../renderer/src/lib/usage-ring'

/** A sample at `atMs` with the given busy percent per device. */
function sample(atMs: number, busy: Record<string, number>, extra: Partial<UsageSample> = {}): UsageSample {
  return {
    atMs,
    devices: Object.entries(busy).map(([id, busyPercent]) => ({ id, busyPercent })),
    systemCpuPercent: 10,
    tokensPerSecond: 0,
    ...extra
  }
}

describe('UsageRing', () => {
  it('appends only samples newer than the newest held, in order', () => {
    const ring = new UsageRing(60_000, 16)
    expect(ring.latestAtMs).toBeNull()
    expect(ring.push([sample(1000, { cpu: 5 }), sample(1250, { cpu: 6 })])).toBe(2)
    // a repeated poll answer overlaps the last one: the duplicate and the older sample are dropped
    expect(ring.push([sample(1250, { cpu: 99 }), sample(1100, { cpu: 98 }), sample(1500, { cpu: 7 })])).toBe(1)
    expect(ring.samples().map((s) => s.atMs)).toEqual([1000, 1250, 1500])
    expect(ring.deviceSeries('cpu').map((p) => p.value)).toEqual([5, 6, 7])
    expect(ring.latestAtMs).toBe(1500)
  })

  it('forgets samples older than the window, measured from the newest sample', () => {
    const ring = new UsageRing(1000, 64)
    ring.push([0, 250, 500, 750, 1000, 1250, 1500].map((t) => sample(t, { cpu: t / 100 })))
    expect(ring.samples().map((s) => s.atMs)).toEqual([500, 750, 1000, 1250, 1500])
    ring.push([sample(10_000, { cpu: 1 })])
    expect(ring.samples().map((s) => s.atMs)).toEqual([10_000])
  })

  it('keeps at most `capacity` samples, dropping the oldest, and wraps around correctly', () => {
    const ring = new UsageRing(1_000_000, 4)
    for (let t = 1; t <= 11; t++) ring.push([sample(t * 10, { cpu: t })])
    expect(ring.size).toBe(4)
    expect(ring.samples().map((s) => s.atMs)).toEqual([80, 90, 100, 110])
    expect(ring.latest?.atMs).toBe(110)
    ring.clear()
    expect(ring.size).toBe(0)
    expect(ring.latest).toBeNull()
  })

  it('holds a full window at the fastest sample rate', () => {
    const ring = new UsageRing()
    const samples: UsageSample[] = []
    for (let t = 0; t <= 60_000; t += 250) samples.push(sample(t, { cpu: 1 }))
    ring.push(samples)
    expect(MAX_USAGE_SAMPLES).toBeGreaterThanOrEqual(241)
    expect(ring.size).toBe(241)
    expect(ring.samples()[0]?.atMs).toBe(0)
  })

  it('clamps percentages and tokens/s and zeroes numbers that are not finite', () => {
    const ring = new UsageRing()
    ring.push([sample(1, { cpu: 140, 'webgpu-0': -3 }, { systemCpuPercent: Number.NaN, tokensPerSecond: Number.POSITIVE_INFINITY })])
    const s = ring.latest
    expect(s?.devices).toEqual([
      { id: 'cpu', busyPercent: 100 },
      { id: 'webgpu-0', busyPercent: 0 }
    ])
    expect(s?.systemCpuPercent).toBe(0)
    expect(s?.tokensPerSecond).toBe(0)
  })

  it('reads per-device series (absent in a sample = no point), ids in first-seen order, peak and newest value', () => {
    const ring = new UsageRing()
    ring.push([sample(0, { cpu: 20 }), sample(250, { cpu: 40, 'webgpu-0': 90 }), sample(500, { cpu: 0, 'webgpu-0': 30 })])
    expect(ring.deviceIds()).toEqual(['cpu', 'webgpu-0'])
    const gpu = ring.deviceSeries('webgpu-0')
    expect(gpu).toEqual([
      { atMs: 250, value: 90 },
      { atMs: 500, value: 30 }
    ])
    expect(peakOf(gpu)).toBe(90)
    expect(nowOf(gpu)).toBe(30)
    expect(nowOf(ring.deviceSeries('cpu'))).toBe(0)
    expect(peakOf(ring.deviceSeries('npu-0'))).toBe(0)
    expect(ring.systemCpuSeries()).toHaveLength(3)
  })
})

describe('chartPaths', () => {
  const frame = { endMs: 60_000, windowMs: 60_000, width: 240, height: 40, maxValue: 100, gapMs: 3000 }

  it('maps time to x (right edge = end) and value to y (top = max)', () => {
    const { line, area } = chartPaths(
      [
        { atMs: 0, value: 0 },
        { atMs: 30_000, value: 50 },
        { atMs: 60_000, value: 100 }
      ],
      { ...frame, gapMs: 60_000 }
    )
    expect(line).toBe('M0 40 L120 20 L240 0')
    expect(area).toBe('M0 40 L0 40 L120 20 L240 0 L240 40 Z')
  })

  it('breaks the line at gaps longer than gapMs and drops points outside the window', () => {
    const { line } = chartPaths(
      [
        { atMs: -5000, value: 80 },
        { atMs: 0, value: 10 },
        { atMs: 1000, value: 10 },
        { atMs: 30_000, value: 10 },
        { atMs: 31_000, value: 10 },
        { atMs: 70_000, value: 10 }
      ],
      frame
    )
    expect(line).toBe('M0 36 L4 36 M120 36 L124 36')
  })

  it('draws a lone sample as a short step, clamps values, and gives empty paths for no points', () => {
    expect(chartPaths([{ atMs: 60_000, value: 250 }], frame).line).toBe('M240 0 L240 0')
    expect(chartPaths([{ atMs: 30_000, value: -1 }], frame).line).toBe('M120 40 L122 40')
    expect(chartPaths([], frame)).toEqual({ line: '', area: '' })
  })
})
