/** @file Debounced search over conversation titles and message content. */
import { useEffect, useState } from 'react'
import type { SearchHit } from '../../../preload/api'
import type { UiError } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import { useApi } from './api-context'
import { useLoad } from './use-load'

/** Wait after the last keystroke before searching (ms). */
const SEARCH_DEBOUNCE_MS = 180

/** Search results for `query` ('' = not searching). */
export function useSearch(query: string): { hits: readonly SearchHit[]; searching: boolean; error: UiError | null } {
  const api = useApi()
  const [hits, setHits] = useState<readonly SearchHit[]>([])
  // A new query resets the load, so an answer for an earlier query (or its failure) is dropped.
  const { loading: searching, error, run, reset } = useLoad()
  const trimmed = query.trim().slice(0, LIMITS.maxSearchChars)

  useEffect(() => {
    if (trimmed === '') {
      reset(false)
      setHits([])
      return
    }
    reset(true)
    const timer = window.setTimeout(() => void run(() => api.conversations.search(trimmed), setHits), SEARCH_DEBOUNCE_MS)
    return () => window.clearTimeout(timer)
  }, [api, trimmed, run, reset])

  return { hits, searching, error }
}
