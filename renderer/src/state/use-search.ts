/** @file Debounced search over conversation titles and message content. */
import { useEffect, useState } from 'react'
import type { SearchHit } from '../../../preload/api'
import { describeError, type UiError } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import { useApi } from './api-context'

/** Wait after the last keystroke before searching (ms). */
const SEARCH_DEBOUNCE_MS = 180

/** Search results for `query` ('' = not searching). */
export function useSearch(query: string): { hits: readonly SearchHit[]; searching: boolean; error: UiError | null } {
  const api = useApi()
  const [hits, setHits] = useState<readonly SearchHit[]>([])
  const [searching, setSearching] = useState(false)
  const [error, setError] = useState<UiError | null>(null)
  const trimmed = query.trim().slice(0, LIMITS.maxSearchChars)

  useEffect(() => {
    if (trimmed === '') {
      setHits([])
      setSearching(false)
      setError(null)
      return
    }
    let cancelled = false
    setSearching(true)
    const timer = window.setTimeout(() => {
      api.conversations.search(trimmed).then(
        (result) => {
          if (cancelled) return
          setHits(result)
          setError(null)
          setSearching(false)
        },
        (e: unknown) => {
          if (cancelled) return
          setError(describeError(e))
          setSearching(false)
        }
      )
    }, SEARCH_DEBOUNCE_MS)
    return () => {
      cancelled = true
      window.clearTimeout(timer)
    }
  }, [api, trimmed])

  return { hits, searching, error }
}
