/** @file The stats line and its detail (pure renderer code): device names as the app reports them, and per-device busy time. */
import { describe, expect, it } from 'vitest'
import type { MessageStats } from '../../preload/api'
import { formatDeviceBusy, formatDevices, formatStatsDetail, formatStatsLine } from '../../renderer/src/lib/format'

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
})
