/**
 * @file The live utilization view beside the chat: per device, how busy it was over the last 60 s (a small
 * chart and the current and peak percent as text), the whole system's CPU use, and the current tokens/s.
 * Devices that are not separate hardware carry the "Software" badge, so a software GPU's work is not
 * mistaken for a real GPU's. Mounted only while open; polling stops when it closes.
 */
import type { JSX } from 'react'
import type { DeviceView } from '../../../preload/api'
import { errorText } from '../lib/errors'
import { formatRate } from '../lib/format'
import { nowOf, peakOf, type SeriesPoint } from '../lib/usage-ring'
import { useUsage } from '../state/use-usage'
import { DeviceLabel } from './DeviceList'
import { Icon } from './icons'
import { UsageChart } from './UsageChart'

/** The DOM id of the panel (the header's toggle controls it). */
export const USAGE_PANEL_ID = 'usage-panel'

interface UsagePanelProps {
  readonly devices: readonly DeviceView[]
  /** the device list has not arrived yet (the first launch probes each device, which takes a few seconds) */
  readonly devicesLoading: boolean
  /** a reply is being generated in this window: poll 4 times a second */
  readonly generating: boolean
  readonly onClose: () => void
  /** opens Settings → Devices */
  readonly onOpenDevices: () => void
}

const percent = (value: number): string => `${Math.round(value)}%`

/** Tokens/s as text, "0" when idle. */
const rate = (value: number): string => (value > 0 ? formatRate(value) : '0')

interface MeterProps {
  readonly title: JSX.Element | string
  /** plain-words name for the chart's label */
  readonly name: string
  readonly points: readonly SeriesPoint[]
  readonly endMs: number
  readonly tone: number
  readonly deviceId?: string
}

/** One row: name, current value, chart, peak. */
function PercentMeter({ title, name, points, endMs, tone, deviceId }: MeterProps): JSX.Element {
  const now = nowOf(points)
  const peak = peakOf(points)
  return (
    <li className="usage-item" data-device-id={deviceId} data-now={Math.round(now)} data-peak={Math.round(peak)}>
      <div className="usage-item-head">
        {title}
        <span className="usage-value">{percent(now)}</span>
      </div>
      <UsageChart points={points} endMs={endMs} maxValue={100} tone={tone} label={`${name} busy: ${percent(now)} now, peak ${percent(peak)} in the last 60 seconds`} />
      <div className="usage-item-foot">peak {percent(peak)}</div>
    </li>
  )
}

/** The panel. */
export function UsagePanel({ devices, devicesLoading, generating, onClose, onOpenDevices }: UsagePanelProps): JSX.Element {
  const { ring, error } = useUsage(true, generating)
  const endMs = ring.latestAtMs ?? 0
  // Ready devices first, in the app's order; then anything the samples mention that the list does not have.
  const shown: { id: string; device: DeviceView | null }[] = devices.filter((d) => d.status === 'ready').map((d) => ({ id: d.id, device: d }))
  for (const id of ring.deviceIds()) if (!shown.some((s) => s.id === id)) shown.push({ id, device: null })
  const tokens = ring.tokensSeries()
  const tokensNow = nowOf(tokens)
  const tokensPeak = peakOf(tokens)
  return (
    <aside id={USAGE_PANEL_ID} className="usage-panel" aria-labelledby="usage-title">
      <header className="usage-header">
        <h2 id="usage-title">Device activity</h2>
        <button type="button" className="icon-button" aria-label="Hide device activity" onClick={onClose}>
          <Icon name="close" size={16} />
        </button>
      </header>
      <div className="usage-body">
        <div className="usage-tokens" data-tokens-per-second={Math.round(tokensNow * 10) / 10}>
          <span className="usage-tokens-value">{rate(tokensNow)}</span>
          <span className="usage-tokens-unit">tokens/s {tokensNow > 0 ? 'now' : generating ? 'starting…' : 'idle'}</span>
          <UsageChart
            points={tokens}
            endMs={endMs}
            maxValue={Math.max(1, tokensPeak)}
            tone={0}
            label={`Tokens per second: ${rate(tokensNow)} now, peak ${rate(tokensPeak)} in the last 60 seconds`}
          />
        </div>
        <ul className="usage-list" aria-label="Busy time per device">
          {shown.map(({ id, device }, i) => (
            <PercentMeter
              key={id}
              deviceId={id}
              title={device === null ? <span className="device-name mono">{id}</span> : <DeviceLabel device={device} />}
              name={device === null ? id : `${device.name}${device.software ? ' (software)' : ''}`}
              points={ring.deviceSeries(id)}
              endMs={endMs}
              tone={(i % 4) + 1}
            />
          ))}
          {shown.length === 0 && devicesLoading && (
            <li className="usage-note" aria-busy="true">
              Looking for devices…
            </li>
          )}
          <PercentMeter title={<span className="device-name">System CPU</span>} name="System CPU" points={ring.systemCpuSeries()} endMs={endMs} tone={5} />
        </ul>
        {error !== null && <p className="usage-error">Could not read device activity. {errorText(error)}</p>}
        <p className="usage-foot">
          Last 60 s, {generating ? '4 updates a second' : 'updated every second'}.{' '}
          <button type="button" className="button-link" onClick={onOpenDevices}>
            Change placement
          </button>
        </p>
      </div>
    </aside>
  )
}
