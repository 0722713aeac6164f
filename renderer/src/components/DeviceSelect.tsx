/** @file A labelled select of devices: ready ones selectable, the others listed but disabled with why. */
import type { JSX } from 'react'
import type { DeviceView } from '../../../preload/api'
import { statusText } from '../lib/devices'

interface DeviceSelectProps {
  readonly id: string
  readonly label: string
  /** show the label above the select (forms) instead of only to screen readers (table cells) */
  readonly visibleLabel?: boolean
  readonly devices: readonly DeviceView[]
  /** a device id, or '' for the `inherit` option */
  readonly value: string
  readonly onChange: (value: string) => void
  /** text of an extra first option with value '' (e.g. "Stage default (CPU)") */
  readonly inherit?: string
  readonly disabled?: boolean
  readonly describedBy?: string
  /** a fuller accessible name than the visible label (e.g. "Prefill split 1: first device") */
  readonly ariaLabel?: string
}

/** Device picker. */
export function DeviceSelect(props: DeviceSelectProps): JSX.Element {
  const { devices, value } = props
  const known = value === '' || devices.some((d) => d.id === value)
  return (
    <>
      <label htmlFor={props.id} className={props.visibleLabel === true ? 'field-label' : 'visually-hidden'}>
        {props.label}
      </label>
      <select
        id={props.id}
        value={value}
        disabled={props.disabled}
        aria-label={props.ariaLabel}
        aria-describedby={props.describedBy}
        onChange={(e) => props.onChange(e.target.value)}>
        {props.inherit !== undefined && <option value="">{props.inherit}</option>}
        {!known && (
          <option value={value} disabled>
            {value} (not found)
          </option>
        )}
        {devices.map((d) => (
          <option key={d.id} value={d.id} disabled={d.status !== 'ready'} title={d.status === 'ready' ? d.id : statusText(d)}>
            {d.name}
            {d.software ? ' (software)' : ''}
            {d.status === 'ready' ? '' : ` — ${d.status === 'unprobed' ? 'not tested' : d.status}`}
          </option>
        ))}
      </select>
    </>
  )
}
