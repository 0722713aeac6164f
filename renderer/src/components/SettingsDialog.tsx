/** @file App settings: theme, model folders (add, remove, missing ones flagged), default model and sampling. */
import { useEffect, useState, type JSX } from 'react'
import type { ThemeSetting } from '../../../preload/api'
import { errorText } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import type { SettingsState } from '../state/use-settings'
import { Icon } from './icons'
import { Modal } from './Modal'
import { modelLabel, ModelPicker } from './ModelPicker'
import { parseDraft, SamplingFields, toDraft } from './SamplingFields'

const THEMES: readonly { value: ThemeSetting; label: string }[] = [
  { value: 'system', label: 'Match system' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' }
]

function FoldersSection({ state }: { state: SettingsState }): JSX.Element {
  const [path, setPath] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const add = (): void => {
    const trimmed = path.trim()
    if (trimmed === '') {
      setError('Type the full path of a folder that holds models.')
      return
    }
    setBusy(true)
    void state.addFolder(trimmed).then((failure) => {
      setBusy(false)
      if (failure === null) {
        setPath('')
        setError(null)
      } else {
        setError(errorText(failure))
      }
    })
  }

  return (
    <section className="settings-section" aria-labelledby="settings-folders">
      <h3 id="settings-folders">Model folders</h3>
      <p className="field-help">Tandem looks for GGUF files, llama2.c checkpoints and Hugging Face model folders here.</p>
      <ul className="folder-list">
        {state.folders.map((f) => (
          <li key={f.path} className={f.exists ? 'folder' : 'folder missing'}>
            <Icon name={f.exists ? 'folder' : 'alert'} size={16} />
            <span className="folder-path" title={f.path}>
              {f.path}
            </span>
            {f.builtIn && <span className="badge">Built in</span>}
            {!f.exists && <span className="badge warn">Missing: folder not found</span>}
            {!f.builtIn && (
              <button
                type="button"
                className="button-ghost button-small"
                aria-label={`Remove folder ${f.path}`}
                onClick={() => {
                  void state.removeFolder(f.path).then((failure) => setError(failure === null ? null : errorText(failure)))
                }}
              >
                Remove
              </button>
            )}
          </li>
        ))}
        {state.folders.length === 0 && <li className="field-help">No folders yet.</li>}
      </ul>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault()
          add()
        }}
      >
        <label htmlFor="settings-folder-path" className="visually-hidden">
          Folder path
        </label>
        <input
          id="settings-folder-path"
          value={path}
          maxLength={LIMITS.maxPathChars}
          placeholder="/home/me/models"
          spellCheck={false}
          onChange={(e) => setPath(e.target.value)}
        />
        <button type="submit" className="button-secondary" disabled={busy}>
          Add folder
        </button>
      </form>
      {error !== null && (
        <p className="form-error" role="alert">
          {error}
        </p>
      )}
    </section>
  )
}

function ModelsSection({ state }: { state: SettingsState }): JSX.Element {
  const usable = state.models.filter((m) => m.problem === null)
  return (
    <section className="settings-section" aria-labelledby="settings-models">
      <h3 id="settings-models">Models</h3>
      <div className="field">
        <ModelPicker
          id="settings-default-model"
          label="Default model for new chats"
          visibleLabel
          models={state.models}
          value={state.settings?.defaultModelId ?? null}
          onChange={(id) => void state.update({ defaultModelId: id })}
        />
      </div>
      {state.models.length === 0 ? (
        <p className="empty-note">No models found. Add a folder with GGUF, llama2.c or Hugging Face models above.</p>
      ) : (
        <ul className="model-list" aria-label="Models found">
          {state.models.map((m) => (
            <li key={m.id} className={m.problem === null ? 'model-row' : 'model-row unusable'}>
              <span className="model-name">{modelLabel(m)}</span>
              <span className="model-path" title={m.path}>
                {m.path}
              </span>
              {m.problem !== null && <span className="model-problem">Cannot be used: {m.problem}</span>}
            </li>
          ))}
        </ul>
      )}
      <p className="field-help">
        {usable.length} usable of {state.models.length} found.{' '}
        <button type="button" className="button-link" onClick={() => void state.reload()}>
          Scan again
        </button>
      </p>
    </section>
  )
}

function SamplingSection({ state }: { state: SettingsState }): JSX.Element | null {
  const settings = state.settings
  const [draft, setDraft] = useState(settings === null ? null : toDraft(settings.sampling))
  const [status, setStatus] = useState<{ ok: boolean; text: string } | null>(null)
  if (settings === null || draft === null) return null
  return (
    <section className="settings-section" aria-labelledby="settings-sampling">
      <h3 id="settings-sampling">Default sampling for new chats</h3>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          const parsed = parseDraft(draft)
          if (!parsed.ok) {
            setStatus({ ok: false, text: parsed.error })
            return
          }
          void state.update({ sampling: parsed.value }).then((failure) =>
            setStatus(failure === null ? { ok: true, text: 'Saved.' } : { ok: false, text: errorText(failure) })
          )
        }}
      >
        <SamplingFields idPrefix="defaults" value={draft} onChange={setDraft} />
        <div className="form-actions">
          {status !== null && (
            <p className={status.ok ? 'form-ok' : 'form-error'} role={status.ok ? 'status' : 'alert'}>
              {status.text}
            </p>
          )}
          <span className="spacer" />
          <button type="submit" className="button-secondary">
            Save defaults
          </button>
        </div>
      </form>
    </section>
  )
}

/** The Settings dialog. */
export function SettingsDialog({ state, onClose }: { state: SettingsState; onClose: () => void }): JSX.Element {
  const theme = state.settings?.theme ?? 'system'
  const { reload } = state
  // Folders can appear or vanish on disk at any time: rescan whenever the dialog opens.
  useEffect(() => {
    void reload()
  }, [reload])
  return (
    <Modal title="Settings" onClose={onClose} className="modal-wide">
      {state.error !== null && (
        <p className="form-error" role="alert">
          {state.error.title}: {errorText(state.error)}
        </p>
      )}
      <section className="settings-section" aria-labelledby="settings-appearance">
        <h3 id="settings-appearance">Appearance</h3>
        <fieldset className="segmented">
          <legend className="visually-hidden">Theme</legend>
          {THEMES.map((t) => (
            <label key={t.value} className={theme === t.value ? 'segment checked' : 'segment'}>
              <input type="radio" name="theme" value={t.value} checked={theme === t.value} onChange={() => void state.update({ theme: t.value })} />
              {t.label}
            </label>
          ))}
        </fieldset>
      </section>
      <FoldersSection state={state} />
      <ModelsSection state={state} />
      <SamplingSection state={state} />
    </Modal>
  )
}
