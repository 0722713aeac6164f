/** @file The sidebar's conversation list (most recent first) with rename and delete-with-undo. */
import { useCallback, useEffect, useState } from 'react'
import type { ConversationSummary } from '../../../preload/api'
import { describeError, type UiError } from '../lib/errors'
import { useApi } from './api-context'
import { useLoad } from './use-load'

/** What the conversation list hook exposes. */
export interface ConversationsState {
  readonly list: readonly ConversationSummary[]
  readonly loading: boolean
  readonly error: UiError | null
  readonly refresh: () => Promise<void>
  readonly rename: (id: string, title: string) => Promise<UiError | null>
  /** soft-deletes; resolves to an error or null */
  readonly remove: (id: string) => Promise<UiError | null>
  readonly restore: (id: string) => Promise<UiError | null>
}

const byRecent = (a: ConversationSummary, b: ConversationSummary): number => b.updatedAtMs - a.updatedAtMs

/** Loads and edits the conversation list. */
export function useConversations(): ConversationsState {
  const api = useApi()
  const [list, setList] = useState<readonly ConversationSummary[]>([])
  const { loading, error, run } = useLoad(true)

  // Refreshes overlap (every sent message asks for one); only the newest answer lands.
  const refresh = useCallback(async () => {
    await run(
      () => api.conversations.list(),
      (items) => setList([...items].sort(byRecent))
    )
  }, [api, run])

  useEffect(() => {
    void refresh()
  }, [refresh])

  const rename = useCallback(
    async (id: string, title: string) => {
      try {
        const updated = await api.conversations.update(id, { title })
        setList((items) => items.map((c) => (c.id === id ? { ...c, title: updated.title, updatedAtMs: updated.updatedAtMs } : c)).sort(byRecent))
        return null
      } catch (e) {
        return describeError(e)
      }
    },
    [api]
  )

  const remove = useCallback(
    async (id: string) => {
      try {
        await api.conversations.remove(id)
        setList((items) => items.filter((c) => c.id !== id))
        return null
      } catch (e) {
        return describeError(e)
      }
    },
    [api]
  )

  const restore = useCallback(
    async (id: string) => {
      try {
        await api.conversations.restore(id)
        await refresh()
        return null
      } catch (e) {
        return describeError(e)
      }
    },
    [api, refresh]
  )

  return { list, loading, error, refresh, rename, remove, restore }
}
