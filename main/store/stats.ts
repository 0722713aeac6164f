/** @file The `stats_json` column of messages: checked on the way in and out, field by field. */
import { isRecord } from '../common/reader'
import { parseJson } from './rows'
import type { DeviceBusy, MessageStats, RemoteStats } from './types'

/** Number fields of MessageStats; each must be a finite number. */
const NUMBER_FIELDS = ['ttftMs', 'prefillTokensPerSec', 'decodeTokensPerSec', 'promptTokens', 'generatedTokens'] as const

/** Most devices one message can list; more means the value is not what we wrote. */
export const MAX_STATS_DEVICES = 64

/** Serialises stats for storage; throws RangeError naming the field when one is not finite or not a string. */
export function statsToJson(stats: MessageStats): string {
  const problem = statsProblem(stats)
  if (problem !== undefined) throw new RangeError(`message stats: ${problem}`)
  // Only the known fields, in a fixed order, so extra properties of the caller's object are not stored.
  return JSON.stringify({
    ttftMs: stats.ttftMs,
    prefillTokensPerSec: stats.prefillTokensPerSec,
    decodeTokensPerSec: stats.decodeTokensPerSec,
    promptTokens: stats.promptTokens,
    generatedTokens: stats.generatedTokens,
    model: stats.model,
    devices: [...stats.devices],
    ...(stats.deviceBusy !== undefined && { deviceBusy: stats.deviceBusy.map((d) => ({ id: d.id, name: d.name, busyMs: d.busyMs })) }),
    ...(stats.reusedTokens !== undefined && { reusedTokens: stats.reusedTokens }),
    ...(stats.restoredTokens !== undefined && { restoredTokens: stats.restoredTokens }),
    ...(stats.server !== undefined && { server: { name: stats.server.name, usageReported: stats.server.usageReported } })
  })
}

/** The deviceBusy list, or undefined when absent or not a valid list (it is optional and informational). */
function deviceBusyFrom(value: unknown): DeviceBusy[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_STATS_DEVICES) return undefined
  const out: DeviceBusy[] = []
  for (const d of value) {
    if (!isRecord(d)) return undefined
    const { id, name, busyMs } = d
    if (typeof id !== 'string' || typeof name !== 'string' || typeof busyMs !== 'number' || !Number.isFinite(busyMs)) return undefined
    out.push({ id, name, busyMs })
  }
  return out
}

/**
 * Reads `stats_json`. Stats are informational, so a corrupt value (bad JSON, a missing or mistyped field)
 * reads as null — the message shows without stats — instead of making the whole conversation unreadable.
 */
export function statsFromJson(text: string | null): MessageStats | null {
  if (text === null) return null
  const value = parseJson(text)
  if (!isRecord(value) || statsProblem(value) !== undefined) return null
  const { ttftMs, prefillTokensPerSec, decodeTokensPerSec, promptTokens, generatedTokens, model, devices, deviceBusy } = value
  // statsProblem checked these; the typeof tests narrow them for the compiler without casts.
  if (
    typeof ttftMs !== 'number' ||
    typeof prefillTokensPerSec !== 'number' ||
    typeof decodeTokensPerSec !== 'number' ||
    typeof promptTokens !== 'number' ||
    typeof generatedTokens !== 'number' ||
    typeof model !== 'string' ||
    !Array.isArray(devices)
  ) {
    return null
  }
  const deviceNames = devices.filter((d): d is string => typeof d === 'string')
  const busy = deviceBusyFrom(deviceBusy)
  const reused = countFrom(value.reusedTokens)
  const restored = countFrom(value.restoredTokens)
  const server = serverFrom(value.server)
  return {
    ttftMs,
    prefillTokensPerSec,
    decodeTokensPerSec,
    promptTokens,
    generatedTokens,
    model,
    devices: deviceNames,
    ...(busy !== undefined && { deviceBusy: busy }),
    ...(reused !== undefined && { reusedTokens: reused }),
    ...(restored !== undefined && { restoredTokens: restored }),
    ...(server !== undefined && { server })
  }
}

/** The other server that wrote a message, or undefined when absent or malformed (it is informational). */
function serverFrom(value: unknown): RemoteStats | undefined {
  if (!isRecord(value) || typeof value.name !== 'string' || typeof value.usageReported !== 'boolean') return undefined
  return { name: value.name, usageReported: value.usageReported }
}

/** An optional token count: a non-negative integer, or undefined (absent or not one: it is informational). */
function countFrom(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined
}

/** What is wrong with a stats-shaped value, or undefined when it is valid. */
function statsProblem(value: Record<string, unknown> | MessageStats): string | undefined {
  for (const field of NUMBER_FIELDS) {
    const v = value[field]
    if (typeof v !== 'number' || !Number.isFinite(v)) return `${field} must be a finite number, got ${String(v)}`
  }
  if (typeof value.model !== 'string') return `model must be a string, got ${typeof value.model}`
  const devices = value.devices
  if (!Array.isArray(devices)) return 'devices must be an array of strings'
  if (devices.length > MAX_STATS_DEVICES) return `devices lists ${devices.length} entries (max ${MAX_STATS_DEVICES})`
  if (!devices.every((d: unknown) => typeof d === 'string')) return 'devices must be an array of strings'
  if (value.deviceBusy !== undefined && deviceBusyFrom(value.deviceBusy) === undefined) return 'deviceBusy must be a list of { id, name, busyMs } (finite busyMs)'
  if (value.server !== undefined && serverFrom(value.server) === undefined) return 'server must be { name, usageReported }'
  for (const field of ['reusedTokens', 'restoredTokens'] as const) {
    if (value[field] !== undefined && countFrom(value[field]) === undefined) return `${field} must be a non-negative integer, got ${String(value[field])}`
  }
  return undefined
}
