/**
 * @file Settings → Models → Other servers: OpenAI-compatible servers whose models Tandem can use (a vendor's NPU
 * server, Ollama, LM Studio, vLLM or llama.cpp's server on a bigger machine). "Add server" asks the server for its
 * models first, which can take seconds, and the app refuses one that does not answer (or breaks the URL rules) with
 * the reason. Each server shows its models, where its key is kept and its problem, with Change key and Remove.
 * Every change refreshes the models listed everywhere, so the chat's picker shows (or drops) its models at once.
 */
import { useState, type JSX } from 'react'
import type { RemoteKeyStorage, RemoteServerView } from '../../../preload/api'
import { errorText, type UiError } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import { useRemoteServers } from '../state/use-remote-servers'
import type { SettingsState } from '../state/use-settings'
import { FormError, FormStatus, type FormStatusValue } from './FormError'

/** Where a server's key is kept, in words; `warn` when the user has something to do. */
const KEY_STORAGE: Readonly<Record<RemoteKeyStorage, { readonly text: string; readonly warn: boolean }>> = {
  keychain: { text: 'Key in the system keychain', warn: false },
  memory: { text: 'Key kept until Tandem quits', warn: false },
  missing: { text: 'Key missing: enter it again', warn: true },
  none: { text: 'No key', warn: false }
}

/** A typed key, or null for a server that takes none (an empty field). */
function keyOrNull(text: string): string | null {
  const key = text.trim()
  return key === '' ? null : key
}

/** `failure` as the line to show, or null. */
const shown = (failure: UiError | null): string | null => (failure === null ? null : errorText(failure))

interface KeyFormProps {
  readonly server: RemoteServerView
  /** resolves to the error to show, or null once saved */
  readonly onSave: (apiKey: string | null) => Promise<UiError | null>
  readonly onClose: () => void
}

/** "Change key" opened in the row: a new key (empty: none), Save key and Cancel. */
function KeyForm({ server, onSave, onClose }: KeyFormProps): JSX.Element {
  const [key, setKey] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const id = `server-key-${server.id}`
  return (
    <form
      className="inline-form server-key-form"
      aria-label={`Change the key of ${server.name}`}
      onSubmit={(e) => {
        e.preventDefault()
        setBusy(true)
        void onSave(keyOrNull(key)).then((failure) => {
          setBusy(false)
          if (failure === null) onClose()
          else setError(shown(failure))
        })
      }}
    >
      <label htmlFor={id} className="visually-hidden">
        New key for {server.name}
      </label>
      {/* opened by a click on Change key: the key is the one thing to type next */}
      <input id={id} type="password" autoComplete="off" autoFocus value={key} maxLength={LIMITS.maxApiKeyChars} placeholder="New key (empty: none)" onChange={(e) => setKey(e.target.value)} />
      <button type="submit" className="button-secondary button-small" disabled={busy}>
        {busy ? 'Saving…' : 'Save key'}
      </button>
      <button type="button" className="button-ghost button-small" onClick={onClose}>
        Cancel
      </button>
      <FormError message={error} />
    </form>
  )
}

interface ServerRowProps {
  readonly server: RemoteServerView
  readonly onSetKey: (apiKey: string | null) => Promise<UiError | null>
  readonly onRemove: () => Promise<UiError | null>
}

function ServerRow({ server: s, onSetKey, onRemove }: ServerRowProps): JSX.Element {
  const [changingKey, setChangingKey] = useState(false)
  const [removing, setRemoving] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const key = KEY_STORAGE[s.key]
  const remove = (): void => {
    setRemoving(true)
    void onRemove().then((failure) => {
      // removed: the row goes with it; refused: it stays, with why
      setRemoving(false)
      setError(shown(failure))
    })
  }
  return (
    <li className={s.problem === null ? 'model-row server-row' : 'model-row server-row unusable'} data-server-id={s.id}>
      <div className="model-row-head">
        <span className="model-name">{s.name}</span>
        <span className={key.warn ? 'badge warn' : 'badge'}>{key.text}</span>
        <span className="spacer" />
        {!changingKey && (
          <button type="button" className="button-ghost button-small" aria-label={`Change the key of ${s.name}`} onClick={() => setChangingKey(true)}>
            Change key
          </button>
        )}
        <button type="button" className="button-ghost button-small" aria-label={`Remove server ${s.name}`} disabled={removing} onClick={remove}>
          Remove
        </button>
      </div>
      <span className="model-path" title={s.url}>
        {s.url}
      </span>
      {s.models.length > 0 ? (
        <ul className="server-models" aria-label={`Models on ${s.name}`}>
          {s.models.map((m) => (
            <li key={m}>{m}</li>
          ))}
        </ul>
      ) : (
        // with a problem, the server was not asked (or did not answer): the problem says why, not "no models"
        s.problem === null && <span className="model-facts">It offers no models.</span>
      )}
      {s.problem !== null && <span className="model-problem">Cannot be used now: {s.problem}</span>}
      {changingKey && <KeyForm server={s} onSave={onSetKey} onClose={() => setChangingKey(false)} />}
      <FormError message={error} />
    </li>
  )
}

/** Said next to the key field: where a key will be kept (`keychain` null: not known until the servers are read). */
function keyHelp(keychain: boolean | null): string {
  const empty = 'Leave it empty for a server that takes no key.'
  if (keychain === null) return empty
  return keychain
    ? `A key is kept sealed by this system's keychain. ${empty}`
    : `This system has no keychain Tandem can use: a key is kept only until Tandem quits, then it must be entered again. ${empty}`
}

interface ServerFieldProps {
  readonly id: string
  readonly label: string
  readonly type?: 'text' | 'url' | 'password'
  readonly value: string
  readonly maxLength: number
  readonly placeholder: string
  /** a sentence under the field, read with it by screen readers */
  readonly help?: string
  readonly onChange: (value: string) => void
}

/** A labelled field of the add form (no spell checking or autofill: names, addresses, keys). */
function ServerField({ id, label, type = 'text', value, maxLength, placeholder, help, onChange }: ServerFieldProps): JSX.Element {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type={type}
        value={value}
        maxLength={maxLength}
        placeholder={placeholder}
        spellCheck={false}
        autoComplete="off"
        aria-describedby={help === undefined ? undefined : `${id}-help`}
        onChange={(e) => onChange(e.target.value)}
      />
      {help !== undefined && (
        <span id={`${id}-help`} className="field-help">
          {help}
        </span>
      )}
    </>
  )
}

/** The add form: name, URL, key; the note next to the key says honestly where it will be kept. */
function AddServerForm({ keychain, onAdd }: { readonly keychain: boolean | null; readonly onAdd: (name: string, url: string, apiKey: string | null) => Promise<UiError | null> }): JSX.Element {
  const [name, setName] = useState('')
  const [url, setUrl] = useState('')
  const [key, setKey] = useState('')
  const [busy, setBusy] = useState(false)
  const [status, setStatus] = useState<FormStatusValue | null>(null)
  const submit = (): void => {
    const trimmedName = name.trim()
    const trimmedUrl = url.trim()
    if (trimmedName === '' || trimmedUrl === '') {
      setStatus({ ok: false, text: "Give the server a name and its address (the OpenAI-compatible base URL, often ending in /v1)." })
      return
    }
    setBusy(true)
    setStatus({ ok: true, text: `Asking ${trimmedUrl} for its models…` })
    void onAdd(trimmedName, trimmedUrl, keyOrNull(key)).then((failure) => {
      setBusy(false)
      if (failure !== null) {
        setStatus({ ok: false, text: errorText(failure) })
        return
      }
      setStatus({ ok: true, text: `Added ${trimmedName}.` })
      setName('')
      setUrl('')
      setKey('')
    })
  }
  return (
    <form
      className="server-form"
      aria-label="Add a server"
      aria-busy={busy}
      noValidate
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
    >
      <div className="server-form-fields">
        <ServerField id="server-name" label="Name" value={name} maxLength={LIMITS.maxServerNameChars} placeholder="NPU server" onChange={setName} />
        <ServerField
          id="server-url"
          label="URL"
          type="url"
          value={url}
          maxLength={LIMITS.maxServerUrlChars}
          placeholder="http://127.0.0.1:8000/v1"
          help="Plain http:// only for a server on this computer; https:// for any other."
          onChange={setUrl}
        />
        <ServerField
          id="server-key"
          label="Key"
          type="password"
          value={key}
          maxLength={LIMITS.maxApiKeyChars}
          placeholder="optional"
          help={keyHelp(keychain)}
          onChange={setKey}
        />
      </div>
      <div className="form-actions">
        <FormStatus status={status} />
        <span className="spacer" />
        <button type="submit" className="button-secondary" disabled={busy}>
          {busy ? 'Checking…' : 'Add server'}
        </button>
      </div>
    </form>
  )
}

/** The section. */
export function RemoteServers({ state }: { readonly state: SettingsState }): JSX.Element {
  const servers = useRemoteServers(state.changeModels)
  const view = servers.view
  return (
    <section className="settings-section" aria-labelledby="settings-servers">
      <h3 id="settings-servers">Other servers</h3>
      <p className="field-help">
        Use the models another server runs, through its OpenAI-compatible API: a vendor&apos;s NPU server such as Lemonade or Foundry Local, Ollama or LM Studio, or vLLM or
        llama.cpp&apos;s server on a bigger machine. Their models join the model picker under the server&apos;s name.
      </p>
      {view === null && servers.loading && (
        <p className="field-help" aria-busy="true">
          Asking the servers for their models…
        </p>
      )}
      {view === null && servers.error !== null && (
        <p className="form-error" role="alert">
          The servers could not be read: {errorText(servers.error)}
        </p>
      )}
      {view !== null &&
        (view.servers.length === 0 ? (
          <p className="empty-note">No other servers yet.</p>
        ) : (
          <ul className="model-list" aria-label="Other servers">
            {view.servers.map((s) => (
              <ServerRow key={s.id} server={s} onSetKey={(apiKey) => servers.setKey(s.id, apiKey)} onRemove={() => servers.remove(s.id)} />
            ))}
          </ul>
        ))}
      <AddServerForm keychain={view?.keychain ?? null} onAdd={(name, url, apiKey) => servers.add({ name, url, apiKey })} />
    </section>
  )
}
