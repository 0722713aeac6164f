/**
 * @file App settings in three tabs. General: theme, default sampling, conversation memory, the local API, export
 * and import of conversations. Models: the model folders, the models found and added with the default for new
 * chats, the catalog to download from and other servers whose models can be used (ModelsSettings). Devices: the
 * compute devices and the placement (DevicesSettings).
 */
import { useEffect, useRef, useState, type JSX, type KeyboardEvent } from 'react'
import type { ThemeSetting } from '../../../preload/api'
import { errorText } from '../lib/errors'
import type { DevicesState } from '../state/use-devices'
import { useEdits } from '../state/use-edits'
import type { SettingsState } from '../state/use-settings'
import { ConversationTransferSettings } from './ConversationTransferSettings'
import { DevicesSettings } from './DevicesSettings'
import { FormStatus, type FormStatusValue } from './FormError'
import { KvSnapshotSettings } from './KvSnapshotSettings'
import { LocalApiSettings } from './LocalApiSettings'
import { Modal } from './Modal'
import { ModelsSettings } from './ModelsSettings'
import { parseDraft, SamplingFields, toDraft } from './SamplingFields'

const THEMES: readonly { value: ThemeSetting; label: string }[] = [
  { value: 'system', label: 'Match system' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' }
]

function SamplingSection({ state }: { state: SettingsState }): JSX.Element | null {
  const settings = state.settings
  // Follows the saved defaults (they may load, or reload, after the dialog opened) until the user edits them.
  const draft = useEdits(settings === null ? null : toDraft(settings.sampling))
  const [status, setStatus] = useState<FormStatusValue | null>(null)
  const shown = draft.value
  if (shown === null) return null
  return (
    <section className="settings-section" aria-labelledby="settings-sampling">
      <h3 id="settings-sampling">Default sampling for new chats</h3>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          const parsed = parseDraft(shown)
          if (!parsed.ok) {
            setStatus({ ok: false, text: parsed.error })
            return
          }
          void state.update({ sampling: parsed.value }).then((failure) => {
            // Saved: show the settings again (they now hold it), unless the user typed on meanwhile.
            if (failure === null) draft.discardIfStill(shown)
            setStatus(failure === null ? { ok: true, text: 'Saved.' } : { ok: false, text: errorText(failure) })
          })
        }}
      >
        <SamplingFields idPrefix="defaults" value={shown} onChange={draft.edit} />
        <div className="form-actions">
          <FormStatus status={status} />
          <span className="spacer" />
          <button type="submit" className="button-secondary">
            Save defaults
          </button>
        </div>
      </form>
    </section>
  )
}

/** The dialog's tabs. */
export type SettingsTab = 'general' | 'models' | 'devices'

const TABS: readonly { id: SettingsTab; label: string }[] = [
  { id: 'general', label: 'General' },
  { id: 'models', label: 'Models' },
  { id: 'devices', label: 'Devices' }
]

interface SettingsDialogProps {
  readonly state: SettingsState
  readonly devices: DevicesState
  readonly initialTab?: SettingsTab
  /** conversations were imported: the list should show them */
  readonly onConversationsImported: () => void
  readonly onClose: () => void
}

function GeneralSettings({ state, onConversationsImported }: { state: SettingsState; onConversationsImported: () => void }): JSX.Element {
  const theme = state.settings?.theme ?? 'system'
  return (
    <>
      <section className="settings-section" aria-labelledby="settings-appearance">
        <h3 id="settings-appearance">Appearance</h3>
        {/* not until the settings are loaded: a choice made before would have nothing to show it on */}
        <fieldset className="segmented" disabled={state.settings === null}>
          <legend className="visually-hidden">Theme</legend>
          {THEMES.map((t) => (
            <label key={t.value} className={theme === t.value ? 'segment checked' : 'segment'}>
              <input type="radio" name="theme" value={t.value} checked={theme === t.value} onChange={() => void state.update({ theme: t.value })} />
              {t.label}
            </label>
          ))}
        </fieldset>
      </section>
      <SamplingSection state={state} />
      <KvSnapshotSettings state={state} />
      <LocalApiSettings />
      <ConversationTransferSettings onImported={onConversationsImported} />
    </>
  )
}

/** The Settings dialog. */
export function SettingsDialog({ state, devices, initialTab = 'general', onConversationsImported, onClose }: SettingsDialogProps): JSX.Element {
  const [tab, setTab] = useState<SettingsTab>(initialTab)
  const tabButtons = useRef(new Map<SettingsTab, HTMLButtonElement>())
  const { reload } = state
  // Folders can appear or vanish on disk at any time: rescan whenever the dialog opens.
  useEffect(() => {
    void reload()
  }, [reload])

  // Tabs follow the ARIA pattern: one tab stop, arrow keys (and Home/End) move between tabs and select them.
  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>): void => {
    const index = TABS.findIndex((t) => t.id === tab)
    const next = e.key === 'ArrowRight' ? index + 1 : e.key === 'ArrowLeft' ? index - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? TABS.length - 1 : null
    if (next === null) return
    e.preventDefault()
    const target = TABS[(next + TABS.length) % TABS.length]
    if (target === undefined) return
    setTab(target.id)
    tabButtons.current.get(target.id)?.focus()
  }

  return (
    <Modal title="Settings" onClose={onClose} className="modal-wide">
      {state.error !== null && (
        <p className="form-error" role="alert">
          {state.error.title}: {errorText(state.error)}
        </p>
      )}
      <div className="tabs" role="tablist" aria-label="Settings sections">
        {TABS.map((t) => (
          <button
            key={t.id}
            ref={(el) => {
              if (el === null) tabButtons.current.delete(t.id)
              else tabButtons.current.set(t.id, el)
            }}
            type="button"
            role="tab"
            id={`settings-tab-${t.id}`}
            className="tab"
            aria-selected={tab === t.id}
            aria-controls={`settings-panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            onClick={() => setTab(t.id)}
            onKeyDown={onTabKey}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`settings-panel-${tab}`} aria-labelledby={`settings-tab-${tab}`} className="tab-panel">
        {tab === 'general' && <GeneralSettings state={state} onConversationsImported={onConversationsImported} />}
        {tab === 'models' && <ModelsSettings state={state} />}
        {tab === 'devices' && <DevicesSettings state={devices} settings={state} />}
      </div>
    </Modal>
  )
}
