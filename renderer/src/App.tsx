/** @file Placeholder app shell: the name and, inside Electron, the version from `window.tandem`. */
import { useEffect, useState, type JSX } from 'react'

/** Top-level component; the chat, conversations and settings arrive with the app issue. */
export function App(): JSX.Element {
  const [version, setVersion] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)

  useEffect(() => {
    const api = window.tandem
    if (api === undefined) return
    let cancelled = false
    api.version().then(
      (v) => {
        if (!cancelled) setVersion(v)
      },
      (e: unknown) => {
        if (!cancelled) setError(e instanceof Error ? e.message : String(e))
      }
    )
    return () => {
      cancelled = true
    }
  }, [])

  return (
    <main>
      <h1>Tandem</h1>
      {version !== null && <p data-testid="version">Version {version}</p>}
      {error !== null && <p role="alert">Could not read the version: {error}</p>}
    </main>
  )
}
