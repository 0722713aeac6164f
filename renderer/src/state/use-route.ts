/** @file The open conversation in the URL hash (#/c/<id>), so a reload reopens it and Back works. */
import { useCallback, useEffect, useState } from 'react'

const ROUTE = /^#\/c\/([A-Za-z0-9_-]{1,200})$/

function readRoute(): string | null {
  return ROUTE.exec(window.location.hash)?.[1] ?? null
}

/** The conversation id in the hash and a setter that updates it (keeping the query, e.g. the token). */
export function useRoute(): [string | null, (id: string | null) => void] {
  const [id, setId] = useState<string | null>(readRoute)
  useEffect(() => {
    const onHashChange = (): void => setId(readRoute())
    window.addEventListener('hashchange', onHashChange)
    return () => window.removeEventListener('hashchange', onHashChange)
  }, [])
  const navigate = useCallback((next: string | null) => {
    const hash = next === null ? '' : `#/c/${next}`
    if (window.location.hash !== hash) {
      const url = `${window.location.pathname}${window.location.search}${hash}`
      window.history.pushState(null, '', url)
    }
    setId(next)
  }, [])
  return [id, navigate]
}
