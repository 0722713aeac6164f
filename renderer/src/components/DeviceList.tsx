/**
 * @file The compute devices in Settings → Devices: name, kind, execution provider, status (with the reason
 * when a device cannot be used), and a "Software" badge with its explanation on devices that are not
 * separate hardware. Also the small name-plus-badge label the live view reuses.
 */
import type { JSX } from 'react'
import type { DeviceView } from '../../../preload/api'
import { kindLabel, softwareNote, statusText } from '../lib/devices'
import { Icon } from './icons'

/** A device's name with a "Software" badge when it is not separate hardware. */
export function DeviceLabel({ device }: { device: DeviceView }): JSX.Element {
  return (
    <span className="device-label">
      <span className="device-name">{device.name}</span>
      {device.software && (
        <span className="badge software" title={softwareNote(device)}>
          Software
        </span>
      )}
    </span>
  )
}

/** The list of devices, ready or not. */
export function DeviceList({ devices }: { devices: readonly DeviceView[] }): JSX.Element {
  return (
    <ul className="device-list" aria-label="Devices">
      {devices.map((d) => {
        const ready = d.status === 'ready'
        return (
          <li key={d.id} className={ready ? 'device-row' : 'device-row unusable'} data-device-id={d.id}>
            <div className="device-row-main">
              <DeviceLabel device={d} />
              <span className={ready ? 'badge ok' : 'badge warn'}>{ready ? 'Ready' : d.status === 'unprobed' ? 'Not tested' : d.status === 'failed' ? 'Failed' : 'Unavailable'}</span>
            </div>
            <p className="device-facts">
              {kindLabel(d.kind)} · <span className="mono">{d.id}</span> · ONNX Runtime {d.ep}
            </p>
            {d.software && <p className="device-note">{softwareNote(d)}</p>}
            {!ready && (
              <p className="device-problem">
                <Icon name="alert" size={14} />
                <span>{statusText(d)}. Not used; placements that name it are refused.</span>
              </p>
            )}
          </li>
        )
      })}
      {devices.length === 0 && <li className="field-help">No devices found yet.</li>}
    </ul>
  )
}
