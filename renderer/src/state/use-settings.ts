/** @file App settings, model folders and the models found in them; loaded once and refreshed on change. */
import { useCallback, useEffect, useRef, useState } from 'react'
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
  /** adds one model file (the app reads it first and refuses one it cannot use); resolves to the error to show, or null */
  readonly addFile: (path: string) => Promise<UiError | null>
  /** forgets an added file, or deletes a downloaded model; resolves to the error to show, or null */
  readonly removeModel: (modelId: string) => Promise<UiError | null>
  /**
   * runs a change made elsewhere that alters the models listed (another server added, removed, given a key), then
   * reads the settings and models again; resolves to the change's error to show, or null
   */
  readonly changeModels: (change: () => Promise<void>) => Promise<UiError | null>
}

/** Changes kept for laying over late answers; more than any user makes while one answer is on its way. */
const MAX_REMEMBERED_CHANGES = 64

/** Loads settings, folders and models from the Api. */
export function useSettings(): SettingsState {
  const api = useApi()
  const [settings, setSettings] = useState<Settings | null>(null)
  const [models, setModels] = useState<readonly ModelEntry[]>([])
  const [folders, setFolders] = useState<readonly ModelFolder[]>([])
  const { loading, error, run } = useLoad(true)
  // The user's changes, numbered. An answer read before a change (the dialog reloads when it opens, and a
  // slow load can land after the change's own answer) holds the old value: the changes made since the
  // request started are laid over it, so a choice never flips back on screen.
  const changes = useRef<{ readonly seq: number; readonly patch: SettingsPatch }[]>([])
  const lastSeq = useRef(0)
  const changedSince = useCallback(
    (s: Settings, since: number): Settings => changes.current.filter((c) => c.seq > since).reduce<Settings>((acc, c) => ({ ...acc, ...c.patch }), s),
    []
  )

  // The dialog rescans on every opening, and a failed save reloads: only the newest answer lands.
  const reload = useCallback(async () => {
    const since = lastSeq.current
    await run(
      () => Promise.all([api.settings.get(), api.models.folders(), api.models.list()]),
      ([s, f, m]) => {
        setSettings(changedSince(s, since))
        setFolders(f)
        setModels(m)
      }
    )
  }, [api, run, changedSince])

  useEffect(() => {
    void reload()
  }, [reload])

  const update = useCallback(
    async (patch: SettingsPatch) => {
      // Optimistic, so a radio or select reflects the choice at once; the app's answer (or a reload on
      // failure) then settles it.
      const seq = ++lastSeq.current
      changes.current = [...changes.current.slice(1 - MAX_REMEMBERED_CHANGES), { seq, patch }]
      setSettings((current) => (current === null ? current : { ...current, ...patch }))
      try {
        setSettings(changedSince(await api.settings.update(patch), seq))
        return null
      } catch (e) {
        changes.current = changes.current.filter((c) => c.seq !== seq)
        void reload()
        return describeError(e)
      }
    },
    [api, reload, changedSince]
  )

  /** Makes a change to the folders or models, then reads the settings and models it changed. */
  const changeModels = useCallback(
    async (change: () => Promise<void>) => {
      try {
        await change()
        const since = lastSeq.current
        const [s, m] = await Promise.all([api.settings.get(), api.models.list()])
        setSettings(changedSince(s, since))
        setModels(m)
        return null
      } catch (e) {
        return describeError(e)
      }
    },
    [api, changedSince]
  )
  const addFolder = useCallback((path: string) => changeModels(async () => setFolders(await api.models.addFolder(path))), [api, changeModels])
  const removeFolder = useCallback((path: string) => changeModels(async () => setFolders(await api.models.removeFolder(path))), [api, changeModels])
  const addFile = useCallback((path: string) => changeModels(async () => void (await api.models.addFile(path))), [api, changeModels])
  const removeModel = useCallback((modelId: string) => changeModels(async () => void (await api.models.remove(modelId))), [api, changeModels])

  return { settings, models, folders, loading, error, reload, update, addFolder, removeFolder, addFile, removeModel, changeModels }
}
