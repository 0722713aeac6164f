/**
 * @file Settings → Other servers: the servers added, read when the section opens (the app asks each one for its
 * models again, which can take seconds), and the changes made there. Each change also changes the models listed
 * everywhere (the chat's picker included), so it runs through the settings' `changeModels`, which reads them again.
 */
import { useCallback, useEffect, useRef, useState } from 'react'
import type { RemoteServerInit, RemoteServers } from '../../../preload/api'
import type { UiError } from '../lib/errors'
import { useApi } from './api-context'
import { useLoad } from './use-load'
import type { SettingsState } from './use-settings'

/** What the servers hook exposes. */
export interface RemoteServersState {
  /** null until the first list arrived */
  readonly view: RemoteServers | null
  readonly loading: boolean
  /** the list could not be read */
  readonly error: UiError | null
  /** each resolves to the error to show beside its form, or null when done */
  readonly add: (init: RemoteServerInit) => Promise<UiError | null>
  readonly setKey: (id: string, apiKey: string | null) => Promise<UiError | null>
  readonly remove: (id: string) => Promise<UiError | null>
}

/** Loads the servers; `changeModels` is the settings' (it refreshes the models after a change). */
export function useRemoteServers(changeModels: SettingsState['changeModels']): RemoteServersState {
  const api = useApi()
  const [view, setView] = useState<RemoteServers | null>(null)
  const { loading, error, run } = useLoad(true)
  // Bumped by every change: a list asked for before it (slow: every server is asked) holds the old servers and
  // must not land over the change's own answer.
  const version = useRef(0)

  useEffect(() => {
    const mine = version.current
    void run(
      () => api.servers.list(),
      (v) => {
        if (mine === version.current) setView(v)
      }
    )
  }, [api, run])

  const change = useCallback(
    (task: () => Promise<RemoteServers>) =>
      changeModels(async () => {
        const next = await task()
        version.current++
        setView(next)
      }),
    [changeModels]
  )
  const add = useCallback((init: RemoteServerInit) => change(() => api.servers.add(init)), [api, change])
  const setKey = useCallback((id: string, apiKey: string | null) => change(() => api.servers.setKey(id, apiKey)), [api, change])
  const remove = useCallback((id: string) => change(() => api.servers.remove(id)), [api, change])

  return { view, loading, error, add, setKey, remove }
}
