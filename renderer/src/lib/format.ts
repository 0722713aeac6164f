/** @file Display formatting: stats lines, sizes, dates. Pure functions, no React. */
import type { MessageStats, ModelLoadProgress } from '../../../preload/api'

/** Title shown for a conversation without one. */
export const UNTITLED = 'Untitled chat'

/** Milliseconds for humans: "12 ms", "1.4 s". */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–'
  if (ms < 1000) return `${Math.round(ms)} ms`
  return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`
}

/** Tokens per second, with a precision that suits the magnitude. */
export function formatRate(tokensPerSec: number): string {
  if (!Number.isFinite(tokensPerSec) || tokensPerSec <= 0) return '–'
  return tokensPerSec >= 100 ? String(Math.round(tokensPerSec)) : tokensPerSec.toFixed(1)
}

/** Device names as shown, de-duplicated; a bare engine id ("cpu") is upper-cased, real names are kept as they are. */
export function formatDevices(devices: readonly string[]): string {
  const names = [...new Set(devices.map((d) => (/^[a-z]+$/.test(d) ? d.toUpperCase() : d)))]
  return names.length === 0 ? '–' : names.join(' + ')
}

/** Per device, the time it was busy on a reply: "CPU 120 ms, Software GPU 1.2 s". */
export function formatDeviceBusy(deviceBusy: NonNullable<MessageStats['deviceBusy']>): string {
  return deviceBusy.map((d) => `${d.name} ${formatMs(d.busyMs)}`).join(', ')
}

/** Where a reply ran: "CPU + Software GPU", or "on Loopback Tandem" for a reply another server wrote. */
function formatWhere(stats: MessageStats): string {
  return stats.server === undefined ? formatDevices(stats.devices) : `on ${stats.server.name}`
}

/**
 * " (counted here)" when another server wrote the reply without reporting its token counts, so Tandem counted
 * them from the streamed text: an estimate, said so beside every figure made from them. Else "".
 */
function countedHere(stats: MessageStats): string {
  return stats.server !== undefined && !stats.server.usageReported ? ' (counted here)' : ''
}

/** The one-line stats under an assistant message: "TTFT 12 ms · 850 tok/s · CPU". */
export function formatStatsLine(stats: MessageStats): string {
  const resumed = formatResumed(stats)
  return `TTFT ${formatMs(stats.ttftMs)} · ${formatRate(stats.decodeTokensPerSec)} tok/s${countedHere(stats)} · ${formatWhere(stats)}${resumed === null ? '' : ` · ${resumed}`}`
}

/** The longer description behind the stats line (tooltip and screen readers). */
export function formatStatsDetail(stats: MessageStats): string {
  const counted = countedHere(stats)
  const parts = [
    `Model ${stats.model}`,
    `${stats.promptTokens} prompt tokens${counted} at ${formatRate(stats.prefillTokensPerSec)} tok/s`,
    `${stats.generatedTokens} generated tokens${counted} at ${formatRate(stats.decodeTokensPerSec)} tok/s`,
    `time to first token ${formatMs(stats.ttftMs)}`,
    `on ${stats.server?.name ?? formatDevices(stats.devices)}`
  ]
  if (stats.deviceBusy !== undefined && stats.deviceBusy.length > 0) parts.push(`busy: ${formatDeviceBusy(stats.deviceBusy)}`)
  const resumed = formatResumed(stats)
  if (resumed !== null) parts.push(resumed)
  return parts.join(', ')
}

/** "resumed 1,980 of 2,010 tokens" when a KV snapshot brought prompt tokens back, else null. */
export function formatResumed(stats: MessageStats): string | null {
  if (stats.restoredTokens === undefined || stats.restoredTokens === 0) return null
  return `resumed ${(stats.reusedTokens ?? stats.restoredTokens).toLocaleString('en-US')} of ${stats.promptTokens.toLocaleString('en-US')} tokens`
}

const SIZE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB']

/** Bytes for humans: "1.1 MB". */
export function formatBytes(sizeBytes: number): string {
  let value = sizeBytes
  let unit = 0
  while (value >= 1000 && unit < SIZE_UNITS.length - 1) {
    value /= 1000
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${SIZE_UNITS[unit] ?? 'B'}`
}

/** Parameter counts for humans: "260K", "1.5B". */
export function formatParameters(count: number): string {
  if (count >= 1e9) return `${(count / 1e9).toFixed(1)}B`
  if (count >= 1e6) return `${(count / 1e6).toFixed(count >= 1e7 ? 0 : 1)}M`
  if (count >= 1e3) return `${Math.round(count / 1e3)}K`
  return String(count)
}

/** Sidebar groups by last activity, most recent first. */
export type DateGroup = 'Today' | 'Yesterday' | 'Previous 7 days' | 'Previous 30 days' | 'Older'

const DAY_MS = 86_400_000

/** Which sidebar group a timestamp falls in, relative to `nowMs` in local time. */
export function dateGroup(timeMs: number, nowMs: number): DateGroup {
  const startOfToday = new Date(nowMs)
  startOfToday.setHours(0, 0, 0, 0)
  const today = startOfToday.getTime()
  if (timeMs >= today) return 'Today'
  if (timeMs >= today - DAY_MS) return 'Yesterday'
  if (timeMs >= today - 7 * DAY_MS) return 'Previous 7 days'
  if (timeMs >= today - 30 * DAY_MS) return 'Previous 30 days'
  return 'Older'
}

/** A short title from a first message: its first line, cut at a word near `maxChars`. */
export function titleFromMessage(content: string, maxChars = 60): string {
  const line = content.trim().split('\n')[0]?.trim() ?? ''
  if (line.length <= maxChars) return line
  const cut = line.slice(0, maxChars)
  const space = cut.lastIndexOf(' ')
  return `${(space > maxChars / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** What opening a model is doing, in words (the reply's progress bar and its accessible name). */
export function formatLoadProgress(p: ModelLoadProgress): string {
  switch (p.stage) {
    case 'compiling':
      return `Compiling the model for this computer: step ${p.done} of ${p.total}`
    case 'reading':
      return `Checking the model file: ${formatBytes(p.done)} of ${formatBytes(p.total)}`
    case 'preparing':
      return 'Loading the model…'
  }
}

/** Time left for humans: "about 40 s left", "about 3 min left", "about 2 h left". */
export function formatTimeLeft(etaMs: number): string {
  const seconds = Math.max(1, Math.ceil(etaMs / 1000))
  if (seconds < 60) return `about ${seconds} s left`
  if (seconds < 3600) return `about ${Math.round(seconds / 60)} min left`
  return `about ${Math.round(seconds / 3600)} h left`
}

/** Where a file's summary is, in words (the text beside its progress bar). */
export function formatSummaryProgress(fileName: string, p: { readonly phase: 'reading' | 'summarizing'; readonly done: number; readonly total: number; readonly etaMs: number | null }): string {
  if (p.phase === 'reading') return `Reading ${fileName}…`
  if (p.total <= 0) return `Summarizing ${fileName}…`
  const left = p.etaMs === null || !Number.isFinite(p.etaMs) || p.done >= p.total ? '' : ` · ${formatTimeLeft(p.etaMs)}`
  return `Summarizing ${fileName}: part ${p.done} of ${p.total}${left}`
}

/** A download's share done, 0–100, whole percent (never 100 before the last byte). */
export function downloadPercent(receivedBytes: number, totalBytes: number): number {
  if (totalBytes <= 0) return 0
  const percent = Math.floor((receivedBytes / totalBytes) * 100)
  return Math.max(0, Math.min(receivedBytes >= totalBytes ? 100 : 99, percent))
}

/** A download in words: "45% · 120 MB of 1.1 GB · 3.2 MB/s · about 2 min left" (speed and time left when known). */
export function formatDownloadProgress(receivedBytes: number, totalBytes: number, bytesPerSec: number | null): string {
  const parts = [`${downloadPercent(receivedBytes, totalBytes)}%`, `${formatBytes(receivedBytes)} of ${formatBytes(totalBytes)}`]
  if (bytesPerSec !== null && Number.isFinite(bytesPerSec) && bytesPerSec > 0) {
    parts.push(`${formatBytes(bytesPerSec)}/s`)
    if (receivedBytes < totalBytes) parts.push(formatTimeLeft(((totalBytes - receivedBytes) / bytesPerSec) * 1000))
  }
  return parts.join(' · ')
}
