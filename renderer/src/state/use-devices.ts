/**
 * @file The compute devices and the placement choice: loaded once, re-read when the Devices settings open
 * (the placement is resolved for the default model, which may have changed), and saved through
 * `devices.setPlacement`, which answers with what the new choice resolves to.
 */
import { useCallback, useEffect, useState } from 'react'
import type { DeviceView, PlacementSetting, PlacementView } from '../../../preload/api'
import type { UiError } from '../lib/errors'
import { useApi } from './api-context'
import { useLoad } from './use-load'

/** What the devices hook exposes. */
export interface DevicesState {
  readonly devices: readonly DeviceView[]
  /** true until the device list first arrived (probing can take a few seconds on first launch) */
  readonly loading: boolean
  /** the last failure to read the device list */
  readonly error: UiError | null
  readonly placement: PlacementView | null
  /** the last failure to read the placement */
  readonly placementError: UiError | null
  /** true while a new choice is being saved (Auto may measure the devices first) */
  readonly saving: boolean
  readonly reload: () => Promise<void>
  /** resolves to the error to show beside the form, or null when saved */
  readonly setPlacement: (setting: PlacementSetting) => Promise<UiError | null>
}

/** Loads the device list and the placement from the Api. */
export function useDevices(): DevicesState {
  const api = useApi()
  const [devices, setDevices] = useState<readonly DeviceView[]>([])
  const [placement, setPlacementView] = useState<PlacementView | null>(null)
  const [saving, setSaving] = useState(false)
  const { loading, error, run: runList } = useLoad(true)
  // Reads and saves of the placement share one load: a save answers with the newest view, so a read that
  // started before it must not overwrite it, and a read started after a save supersedes the save's answer.
  const { error: placementError, run: runPlacement } = useLoad()

  const reload = useCallback(async () => {
    await Promise.all([
      runList(() => api.devices.list(), setDevices),
      runPlacement(() => api.devices.placement(), setPlacementView)
    ])
  }, [api, runList, runPlacement])

  useEffect(() => {
    void reload()
  }, [reload])

  const setPlacement = useCallback(
    async (setting: PlacementSetting): Promise<UiError | null> => {
      setSaving(true)
      try {
        // The form shows a refused save itself; the placement read before is still what is saved.
        return await runPlacement(() => api.devices.setPlacement(setting), setPlacementView, { keepError: false })
      } finally {
        setSaving(false)
      }
    },
    [api, runPlacement]
  )

  return { devices, loading, error, placement, placementError, saving, reload, setPlacement }
}
