/**
 * @file The compute devices and the placement choice: loaded once, re-read when the Devices settings open
 * (the placement is resolved for the default model, which may have changed), and saved through
 * `devices.setPlacement`, which answers with what the new choice resolves to.
 */
import { useCallback, useEffect, useRef, useState } from 'react'
import type { DeviceView, PlacementSetting, PlacementView } from '../../../preload/api'
import { describeError, type UiError } from '../lib/errors'
import { useApi } from './api-context'

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
  const [loading, setLoading] = useState(true)
  const [error, setError] = useState<UiError | null>(null)
  const [placement, setPlacementView] = useState<PlacementView | null>(null)
  const [placementError, setPlacementError] = useState<UiError | null>(null)
  const [saving, setSaving] = useState(false)
  // A save answers with the newest view; a reload that started before it must not overwrite it.
  const generation = useRef(0)

  const reload = useCallback(async () => {
    const seq = ++generation.current
    const [list, view] = await Promise.allSettled([api.devices.list(), api.devices.placement()])
    if (list.status === 'fulfilled') {
      setDevices(list.value)
      setError(null)
    } else {
      setError(describeError(list.reason))
    }
    setLoading(false)
    if (seq !== generation.current) return
    if (view.status === 'fulfilled') {
      setPlacementView(view.value)
      setPlacementError(null)
    } else {
      setPlacementError(describeError(view.reason))
    }
  }, [api])

  useEffect(() => {
    void reload()
  }, [reload])

  const setPlacement = useCallback(
    async (setting: PlacementSetting): Promise<UiError | null> => {
      const seq = ++generation.current
      setSaving(true)
      try {
        const view = await api.devices.setPlacement(setting)
        if (seq === generation.current) {
          setPlacementView(view)
          setPlacementError(null)
        }
        return null
      } catch (e) {
        return describeError(e)
      } finally {
        setSaving(false)
      }
    },
    [api]
  )

  return { devices, loading, error, placement, placementError, saving, reload, setPlacement }
}
