/** @file App settings, model folders and the models found in them; loaded once and refreshed on change. */
import { useCallback, useEffect, useState } from 'react'
import type { ModelEntry, ModelFolder, Settings, SettingsPatch } from '../../../preload/api'
import { describeError, type UiError } from '../lib/errors'
import { useApi } from './api-context'
import { useLoad } from './use-load'

/** What the settings hook exposes. */
export interface SettingsState {
  readonly settings: Settings | null
  readonly models: readonly ModelEntry[]
  readonly folders: readonly ModelFolder[]
  /** true until the first load finished */
  readonly loading: boolean
  /** the last load failure (a save's failure is handed back to its caller) */
  readonly error: UiError | null
  readonly reload: () => Promise<void>
  readonly update: (patch: SettingsPatch) => Promise<UiError | null>
  /** resolves to an error to show beside the folder field, or null on success */
  readonly addFolder: (path: string) => Promise<UiError | null>
  readonly removeFolder: (path: string) => Promise<UiError | null>
}

/** Loads settings, folders and models from the Api. */
export function useSettings(): SettingsState {
  const api = useApi()
  const [settings, setSettings] = useState<Settings | null>(null)
  const [models, setModels] = useState<readonly ModelEntry[]>([])
  const [folders, setFolders] = useState<readonly ModelFolder[]>([])
  const { loading, error, run } = useLoad(true)

  // The dialog rescans on every opening, and a failed save reloads: only the newest answer lands.
  const reload = useCallback(async () => {
    await run(
      () => Promise.all([api.settings.get(), api.models.folders(), api.models.list()]),
      ([s, f, m]) => {
        setSettings(s)
        setFolders(f)
        setModels(m)
      }
    )
  }, [api, run])

  useEffect(() => {
    void reload()
  }, [reload])

  const update = useCallback(
    async (patch: SettingsPatch) => {
      // Optimistic, so a radio or select reflects the choice at once; the app's answer (or a reload on
      // failure) then settles it.
      setSettings((current) => (current === null ? current : { ...current, ...patch }))
      try {
        setSettings(await api.settings.update(patch))
        return null
      } catch (e) {
        void reload()
        return describeError(e)
      }
    },
    [api, reload]
  )

  const changeFolders = useCallback(
    async (change: () => Promise<ModelFolder[]>) => {
      try {
        setFolders(await change())
        const [s, m] = await Promise.all([api.settings.get(), api.models.list()])
        setSettings(s)
        setModels(m)
        return null
      } catch (e) {
        return describeError(e)
      }
    },
    [api]
  )
  const addFolder = useCallback((path: string) => changeFolders(() => api.models.addFolder(path)), [api, changeFolders])
  const removeFolder = useCallback((path: string) => changeFolders(() => api.models.removeFolder(path)), [api, changeFolders])

  return { settings, models, folders, loading, error, reload, update, addFolder, removeFolder }
}
