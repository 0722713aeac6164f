/** @file Per-conversation settings: system prompt and sampling (temperature, top-p, max tokens). */
import { useState, type JSX } from 'react'
import type { ConversationPatch, SamplingSettings } from '../../../preload/api'
import { errorText, type UiError } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import { useEdits } from '../state/use-edits'
import { Modal } from './Modal'
import { parseDraft, SamplingFields, toDraft } from './SamplingFields'

interface ChatSettingsProps {
  readonly systemPrompt: string
  readonly sampling: SamplingSettings
  readonly defaults: SamplingSettings
  readonly onSave: (patch: ConversationPatch) => Promise<UiError | null>
  readonly onClose: () => void
}

/** The dialog; saving applies to this conversation only. */
export function ChatSettingsDialog({ systemPrompt, sampling, defaults, onSave, onClose }: ChatSettingsProps): JSX.Element {
  // Follow the chat's values until edited: a new chat's sampling comes from the app's defaults, which may
  // arrive after the dialog opened.
  const prompt = useEdits(systemPrompt)
  const draft = useEdits(toDraft(sampling))
  const [error, setError] = useState<string | null>(null)
  const [saving, setSaving] = useState(false)

  return (
    <Modal title="Chat settings" onClose={onClose}>
      <form
        className="settings-form"
        // Our own validation names the field in words; the browser's bubbles are easy to miss.
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          const parsed = parseDraft(draft.value)
          if (!parsed.ok) {
            setError(parsed.error)
            return
          }
          setSaving(true)
          void onSave({ systemPrompt: prompt.value, sampling: parsed.value }).then((failure) => {
            setSaving(false)
            if (failure === null) onClose()
            else setError(errorText(failure))
          })
        }}
      >
        <div className="field">
          <label htmlFor="chat-system-prompt">System prompt</label>
          <textarea
            id="chat-system-prompt"
            rows={5}
            value={prompt.value}
            maxLength={LIMITS.maxSystemPromptChars}
            placeholder="For example: You are a concise assistant. Answer in plain English."
            aria-describedby="chat-system-prompt-help"
            onChange={(e) => prompt.edit(e.target.value)}
          />
          <p id="chat-system-prompt-help" className="field-help">
            Sent before every message in this chat. Models without a chat template may ignore it.
          </p>
        </div>
        <SamplingFields idPrefix="chat" value={draft.value} onChange={draft.edit} />
        {error !== null && (
          <p className="form-error" role="alert">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="button" className="button-ghost" onClick={() => draft.edit(toDraft(defaults))}>
            Use default sampling
          </button>
          <span className="spacer" />
          <button type="button" className="button-ghost" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button-primary" disabled={saving}>
            Save
          </button>
        </div>
      </form>
    </Modal>
  )
}
