/**
 * @file Settings → General → Local API: the OpenAI-compatible API other tools on this computer use (a switch, its
 * port, the address and key to give them, "New key"). It listens on 127.0.0.1 only; a tool needs the key.
 */
import { useCallback, useEffect, useState, type JSX } from 'react'
import { API_LIMITS, type LocalApiView } from '../../../preload/api'
import { copyText } from '../lib/clipboard'
import { describeError, errorText } from '../lib/errors'
import { useApi } from '../state/api-context'
import { FormStatus, type FormStatusValue } from './FormError'
import { SwitchWithNumber } from './SwitchWithNumber'

/** The section. */
export function LocalApiSettings(): JSX.Element {
  const api = useApi()
  const [view, setView] = useState<LocalApiView | null>(null)
  const [port, setPort] = useState<string | null>(null)
  const [showKey, setShowKey] = useState(false)
  const [status, setStatus] = useState<FormStatusValue | null>(null)
  const fail = useCallback((e: unknown) => setStatus({ ok: false, text: errorText(describeError(e)) }), [])
  useEffect(() => {
    api.settings.localApi().then(setView, fail)
  }, [api, fail])
  const apply = (enabled: boolean, portText: string): void => {
    const n = Number(portText)
    if (!Number.isInteger(n) || n < API_LIMITS.minApiPort || n > API_LIMITS.maxApiPort) {
      setStatus({ ok: false, text: `The port is a whole number from ${API_LIMITS.minApiPort} to ${API_LIMITS.maxApiPort}.` })
      return
    }
    setStatus(null)
    api.settings.setLocalApi({ enabled, port: n }).then((v) => {
      setView(v)
      setPort(null)
      if (v.problem !== null) setStatus({ ok: false, text: v.problem })
    }, fail)
  }
  if (view === null) return <section className="settings-section" aria-busy="true" aria-label="Local API" />
  const shownPort = port ?? String(view.port)
  const copy = (text: string, what: string): void => {
    void copyText(text).then((ok) => setStatus(ok ? { ok: true, text: `${what} copied.` } : { ok: false, text: `Could not copy the ${what.toLowerCase()}.` }))
  }
  return (
    <section className="settings-section" aria-labelledby="settings-local-api">
      <h3 id="settings-local-api">Local API</h3>
      <p className="field-help">
        Other programs on this computer can use your models through an OpenAI-compatible API (the same engine and devices as this chat). It listens on this computer only, and a
        program needs the key.
      </p>
      <SwitchWithNumber
        switchLabel="Serve the OpenAI-compatible API"
        checked={view.enabled}
        numberId="local-api-port"
        numberLabel="Port"
        min={API_LIMITS.minApiPort}
        max={API_LIMITS.maxApiPort}
        value={shownPort}
        onValueChange={setPort}
        onSave={apply}
      />
      <dl className="local-api-facts">
        <dt>Address</dt>
        <dd>
          {view.url === null ? (
            <span role="status">Not running</span>
          ) : (
            <>
              <code aria-label="API address">{view.url}</code>{' '}
              <button type="button" className="button-secondary" onClick={() => copy(view.url ?? '', 'Address')}>
                Copy
              </button>
            </>
          )}
        </dd>
        <dt>Key</dt>
        <dd>
          <code aria-label="API key">{showKey ? view.key : '•'.repeat(16)}</code>{' '}
          <button type="button" className="button-secondary" aria-pressed={showKey} onClick={() => setShowKey((s) => !s)}>
            {showKey ? 'Hide' : 'Show'}
          </button>{' '}
          <button type="button" className="button-secondary" onClick={() => copy(view.key, 'Key')}>
            Copy
          </button>{' '}
          <button
            type="button"
            className="button-secondary"
            onClick={() =>
              api.settings.regenerateApiKey().then((v) => {
                setView(v)
                setStatus({ ok: true, text: 'A new key is in use; programs with the old one are refused.' })
              }, fail)
            }
          >
            New key
          </button>
        </dd>
      </dl>
      <FormStatus status={status} />
    </section>
  )
}
