/**
 * @file The model catalog of Settings → Models and its downloads. The app owns a download (it goes on when the
 * dialog closes); this hook follows the ones it started, and the ones the catalog shows running when it loads
 * (the dialog reopened), by calling models.download, which joins a running download. Progress is kept per model
 * with when and where this view started following it, for the speed and the time left. Pause keeps a download's
 * bytes; Cancel (models.cancelDownload) deletes them.
 */
import { useCallback, useEffect, useRef, useState } from 'react'
import type { ModelCatalog, ModelEntry } from '../../../preload/api'
import { describeError, errorParts, errorText, type UiError } from '../lib/errors'
import { newRequestId } from '../lib/ids'
import { useApi } from './api-context'
import { useLoad } from './use-load'

/** A download this view follows: bytes now, and the first sample it saw (for the speed). */
export interface LiveDownload {
  readonly receivedBytes: number
  readonly totalBytes: number
  readonly firstMs: number
  readonly firstBytes: number
  readonly nowMs: number
}

/** What the catalog hook exposes. */
export interface CatalogState {
  readonly catalog: ModelCatalog | null
  /** the catalog could not be read */
  readonly error: UiError | null
  /** downloads followed here, by catalog id */
  readonly live: Readonly<Record<string, LiveDownload>>
  /** why a download started here failed, by catalog id (shown until the next try) */
  readonly failures: Readonly<Record<string, string>>
  /** starts (or resumes, or joins) a download */
  readonly download: (catalogId: string) => void
  readonly pause: (catalogId: string) => void
  /** stops a running or paused download and deletes what it kept: the model is available again */
  readonly cancel: (catalogId: string) => void
  readonly reload: () => Promise<void>
}

/** `all` without `key`. */
function without<T>(all: Readonly<Record<string, T>>, key: string): Record<string, T> {
  return Object.fromEntries(Object.entries(all).filter(([k]) => k !== key))
}

/**
 * Loads the catalog, and again whenever `modelsKey` (the listed models) changes: a model deleted or placed
 * elsewhere changes what is installed. `onInstalled` runs when a download followed here placed its model.
 */
export function useCatalog(modelsKey: string, onInstalled: (entry: ModelEntry) => void): CatalogState {
  const api = useApi()
  const [catalog, setCatalog] = useState<ModelCatalog | null>(null)
  const [live, setLive] = useState<Readonly<Record<string, LiveDownload>>>({})
  const [failures, setFailures] = useState<Readonly<Record<string, string>>>({})
  const { error, run } = useLoad(true)
  const following = useRef(new Set<string>())
  // downloads followed here that were cancelled: their ending is not a failure, whatever error it ends with
  const cancelled = useRef(new Set<string>())
  const installed = useRef(onInstalled)
  installed.current = onInstalled

  const fail = useCallback((catalogId: string, e: unknown) => setFailures((all) => ({ ...all, [catalogId]: errorText(describeError(e)) })), [])

  const reload = useCallback(async () => {
    await run(() => api.models.catalog(), setCatalog)
  }, [api, run])

  const download = useCallback(
    (catalogId: string) => {
      if (following.current.has(catalogId)) return
      following.current.add(catalogId)
      setFailures((all) => without(all, catalogId))
      const onEvent = (e: { receivedBytes: number; totalBytes: number }): void => {
        const nowMs = performance.now()
        setLive((all) => {
          const before = all[catalogId]
          const first = before ?? { firstMs: nowMs, firstBytes: e.receivedBytes }
          return { ...all, [catalogId]: { receivedBytes: e.receivedBytes, totalBytes: e.totalBytes, firstMs: first.firstMs, firstBytes: first.firstBytes, nowMs } }
        })
      }
      // shown as downloading at once, before the hub has answered
      setCatalog((c) => c && { ...c, models: c.models.map((m) => (m.id === catalogId && m.state.kind !== 'downloading' ? { ...m, error: null, state: { kind: 'downloading', receivedBytes: m.state.kind === 'paused' ? m.state.receivedBytes : 0, totalBytes: m.sizeBytes } } : m)) })
      api.models
        .download({ requestId: newRequestId(), catalogId }, onEvent)
        .then(
          (entry) => installed.current(entry),
          (e: unknown) => {
            // paused (here or in another window) or cancelled here: not a failure
            if (errorParts(e).name !== 'StoppedError' && !cancelled.current.has(catalogId)) fail(catalogId, e)
          }
        )
        .finally(() => {
          following.current.delete(catalogId)
          cancelled.current.delete(catalogId)
          setLive((all) => without(all, catalogId))
          void reload()
        })
    },
    [api, reload, fail]
  )

  const pause = useCallback(
    (catalogId: string) => {
      api.models.pauseDownload(catalogId).then(
        () => reload(),
        (e: unknown) => fail(catalogId, e)
      )
    },
    [api, reload, fail]
  )

  const cancel = useCallback(
    (catalogId: string) => {
      if (following.current.has(catalogId)) cancelled.current.add(catalogId)
      setFailures((all) => without(all, catalogId))
      api.models.cancelDownload(catalogId).then(
        (view) => {
          // its state as the app left it, at once (available again); the reload settles the rest
          setCatalog((c) => c && { ...c, models: c.models.map((m) => (m.id === catalogId ? view : m)) })
          void reload()
        },
        (e: unknown) => {
          cancelled.current.delete(catalogId)
          fail(catalogId, e)
        }
      )
    },
    [api, reload, fail]
  )

  useEffect(() => {
    void reload()
  }, [reload, modelsKey])

  // A download running in the app that this view does not follow yet (the dialog was closed and opened again).
  useEffect(() => {
    for (const m of catalog?.models ?? []) if (m.state.kind === 'downloading' && !following.current.has(m.id)) download(m.id)
  }, [catalog, download])

  return { catalog, error, live, failures, download, pause, cancel, reload }
}
