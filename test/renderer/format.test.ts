/** @file The stats line and its detail (pure renderer code): device names as the app reports them, and per-device busy time. */
import { describe, expect, it } from 'vitest'
import type { MessageStats } from '../../preload/api'
import { downloadPercent, formatBytes, formatDeviceBusy, formatDevices, formatDownloadProgress, formatLoadProgress, formatResumed, formatStatsDetail, formatStatsLine } from '../../renderer/src/lib/format'

const stats: MessageStats = {
  ttftMs: 42,
  prefillTokensPerSec: 900,
  decodeTokensPerSec: 55.55,
  promptTokens: 7,
  generatedTokens: 60,
  model: 'stories260K.gguf',
  devices: ['CPU (2 cores)', 'Software GPU (lavapipe)']
}

describe('stats formatting', () => {
  it('keeps device names, de-duplicates them, and upper-cases bare engine ids', () => {
    expect(formatDevices(['CPU'])).toBe('CPU')
    expect(formatDevices(['cpu', 'CPU'])).toBe('CPU')
    expect(formatDevices(['Software GPU (lavapipe)', 'CPU (2 cores)', 'Software GPU (lavapipe)'])).toBe('Software GPU (lavapipe) + CPU (2 cores)')
    expect(formatDevices([])).toBe('–')
  })

  it('the line names every device; the detail adds busy time per device when the reply has it', () => {
    expect(formatStatsLine(stats)).toBe('TTFT 42 ms · 55.5 tok/s · CPU (2 cores) + Software GPU (lavapipe)')
    expect(formatStatsDetail(stats)).not.toContain('busy')
    const busy = [
      { id: 'cpu', name: 'CPU (2 cores)', busyMs: 120.4 },
      { id: 'webgpu-0', name: 'Software GPU (lavapipe)', busyMs: 1530 }
    ]
    expect(formatDeviceBusy(busy)).toBe('CPU (2 cores) 120 ms, Software GPU (lavapipe) 1.5 s')
    expect(formatStatsDetail({ ...stats, deviceBusy: busy })).toMatch(/, busy: CPU \(2 cores\) 120 ms, Software GPU \(lavapipe\) 1\.5 s$/)
  })

  it('says how much of the prompt a KV snapshot brought back, and nothing when none did', () => {
    const resumed = { ...stats, promptTokens: 2010, reusedTokens: 1980, restoredTokens: 1900 }
    expect(formatResumed(resumed)).toBe('resumed 1,980 of 2,010 tokens')
    expect(formatStatsLine(resumed)).toBe('TTFT 42 ms · 55.5 tok/s · CPU (2 cores) + Software GPU (lavapipe) · resumed 1,980 of 2,010 tokens')
    expect(formatStatsDetail(resumed)).toMatch(/, resumed 1,980 of 2,010 tokens$/)
    // from the live cache only (the same session): not a resume
    expect(formatResumed({ ...stats, reusedTokens: 5, restoredTokens: 0 })).toBeNull()
    expect(formatResumed(stats)).toBeNull()
  })

  it('a reply another server wrote says where instead of devices, and marks token counts that were counted here', () => {
    const remote: MessageStats = { ...stats, devices: [], server: { name: 'Loopback Tandem', usageReported: true } }
    expect(formatStatsLine(remote)).toBe('TTFT 42 ms · 55.5 tok/s · on Loopback Tandem')
    expect(formatStatsDetail(remote)).toBe('Model stories260K.gguf, 7 prompt tokens at 900 tok/s, 60 generated tokens at 55.5 tok/s, time to first token 42 ms, on Loopback Tandem')
    const counted: MessageStats = { ...remote, server: { name: 'Loopback Tandem', usageReported: false } }
    expect(formatStatsLine(counted)).toBe('TTFT 42 ms · 55.5 tok/s (counted here) · on Loopback Tandem')
    expect(formatStatsDetail(counted)).toContain('7 prompt tokens (counted here) at 900 tok/s, 60 generated tokens (counted here) at 55.5 tok/s')
  })
})

describe('model load progress', () => {
  it('says which stage, with its measure where it has one', () => {
    expect(formatLoadProgress({ stage: 'compiling', done: 5, total: 18 })).toBe('Compiling the model for this computer: step 5 of 18')
    expect(formatLoadProgress({ stage: 'reading', done: 3_000_000, total: 12_000_000 })).toBe(`Checking the model file: ${formatBytes(3_000_000)} of ${formatBytes(12_000_000)}`)
    expect(formatLoadProgress({ stage: 'preparing', done: 0, total: 0 })).toBe('Loading the model…')
  })
})

describe('download progress', () => {
  it('gives the percent (100 only when whole), the bytes, and the speed and time left once known', () => {
    expect(downloadPercent(0, 0)).toBe(0)
    expect(downloadPercent(999, 1000)).toBe(99)
    expect(downloadPercent(1000, 1000)).toBe(100)
    expect(formatDownloadProgress(450_000_000, 1_000_000_000, null)).toBe('45% · 450 MB of 1.0 GB')
    expect(formatDownloadProgress(450_000_000, 1_000_000_000, 5_000_000)).toBe('45% · 450 MB of 1.0 GB · 5.0 MB/s · about 2 min left')
    expect(formatDownloadProgress(1_000_000_000, 1_000_000_000, 5_000_000)).toBe('100% · 1.0 GB of 1.0 GB · 5.0 MB/s')
  })
})
