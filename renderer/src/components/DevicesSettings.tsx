/**
 * @file Settings → Devices: the compute devices found, the provider libraries that bring NPUs, where generation runs
 * on them, and how integer NPUs run the matmuls.
 */
import { useEffect, type JSX } from 'react'
import { errorText } from '../lib/errors'
import type { DevicesState } from '../state/use-devices'
import type { SettingsState } from '../state/use-settings'
import { DeviceList } from './DeviceList'
import { NpuQuantizationSection } from './NpuQuantization'
import { PlacementSettings } from './PlacementSettings'
import { ProviderLibraries } from './ProviderLibraries'

/** The Devices tab. */
export function DevicesSettings({ state, settings }: { state: DevicesState; settings: SettingsState }): JSX.Element {
  const { reload } = state
  // The placement is resolved for the default model, which may have changed since the last look.
  useEffect(() => {
    void reload()
  }, [reload])
  return (
    <>
      <section className="settings-section" aria-labelledby="settings-devices">
        <h3 id="settings-devices">Compute devices</h3>
        <p className="field-help">
          Found on this computer when Tandem started. Devices marked Software are not separate hardware, so they share the CPU&apos;s time.
        </p>
        {state.error !== null ? (
          <p className="form-error" role="alert">
            Could not list the devices. {errorText(state.error)}{' '}
            <button type="button" className="button-link" onClick={() => void reload()}>
              Try again
            </button>
          </p>
        ) : state.loading ? (
          <p className="field-help" aria-busy="true">
            Looking for devices…
          </p>
        ) : (
          <DeviceList devices={state.devices} />
        )}
      </section>
      <ProviderLibraries onChanged={() => void reload()} />
      <PlacementSettings state={state} />
      <NpuQuantizationSection state={settings} />
    </>
  )
}
