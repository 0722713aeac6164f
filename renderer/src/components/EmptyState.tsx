/** @file What a new chat shows before the first message: the model in use (and how to summarize a file), or how to get one. */
import type { JSX } from 'react'
import type { ModelEntry } from '../../../preload/api'
import { MOD_KEY_LABEL as MOD_KEY } from '../lib/platform'
import { Icon } from './icons'

interface EmptyStateProps {
  readonly loading: boolean
  readonly models: readonly ModelEntry[]
  readonly model: ModelEntry | null
  readonly onOpenSettings: () => void
}

/** The empty chat. */
export function EmptyState({ loading, models, model, onOpenSettings }: EmptyStateProps): JSX.Element {
  if (loading) return <div className="empty-state" aria-busy="true" />
  const usable = models.filter((m) => m.problem === null)
  if (usable.length === 0) {
    return (
      <div className="empty-state">
        <div className="empty-icon">
          <Icon name="folder" size={28} />
        </div>
        <h2>No models found</h2>
        <p>
          {models.length === 0
            ? 'Add a folder with GGUF, llama2.c or Hugging Face models in Settings → Models.'
            : `Found ${models.length} model${models.length === 1 ? '' : 's'}, but none can be used. Settings → Models shows why; add a folder with GGUF, llama2.c or Hugging Face models.`}
        </p>
        <button type="button" className="button-primary" onClick={onOpenSettings}>
          Open Settings
        </button>
      </div>
    )
  }
  return (
    <div className="empty-state">
      <div className="empty-icon">
        <Icon name="chat" size={28} />
      </div>
      <h2>Start a conversation</h2>
      <p>{model !== null ? `Replies come from ${model.name}, running on ${model.server ?? 'this computer'}.` : 'Pick a model in the header to begin.'}</p>
      <p className="empty-state-files">To summarize a file, drop it on this window or use Summarize a file… in the sidebar.</p>
      <ul className="shortcuts" aria-label="Keyboard shortcuts">
        <li>
          <kbd>Enter</kbd> send
        </li>
        <li>
          <kbd>Shift+Enter</kbd> new line
        </li>
        <li>
          <kbd>Esc</kbd> stop
        </li>
        <li>
          <kbd>{MOD_KEY}N</kbd> new chat
        </li>
        <li>
          <kbd>{MOD_KEY}K</kbd> search
        </li>
      </ul>
    </div>
  )
}
