/**
 * @file Settings → Models: every model found on this computer, with what the loader read of it (architecture,
 * parameters, quantization, size, chat template) and where it is, or why it cannot be used; "Set as default"; Remove
 * (an added file is forgotten, a model in Tandem's own folder is deleted from the disk after a confirmation); and
 * "Add model file" by its full path (the renderer cannot browse the disk), which the app refuses with the loader's
 * reason. Models of other servers are listed under their server (RemoteServers), but can be the default here.
 */
import { useState, type JSX } from 'react'
import type { ModelEntry } from '../../../preload/api'
import { errorText, type UiError } from '../lib/errors'
import { formatBytes, formatParameters } from '../lib/format'
import { isRemoteModel } from '../lib/models'
import type { SettingsState } from '../state/use-settings'
import { AddPathForm } from './AddPathForm'
import { ConfirmInline } from './ConfirmInline'
import { FormError } from './FormError'
import { ModelPicker } from './ModelPicker'

const FORMATS: Readonly<Record<ModelEntry['format'], string>> = { gguf: 'GGUF', llama2c: 'llama2.c', hf: 'Hugging Face', remote: 'Another server' }

const ORIGINS: Readonly<Record<ModelEntry['origin'], string>> = {
  'added-file': 'Added file',
  'own-folder': "In Tandem's models folder",
  folder: 'In a models folder',
  server: 'On another server'
}

/** What the loader read of a model, in one line. */
export function modelFacts(m: ModelEntry): string {
  const facts = [FORMATS[m.format]]
  if (m.architecture !== null) facts.push(m.architecture)
  if (m.parameters !== null) facts.push(`${formatParameters(m.parameters)} parameters`)
  if (m.quantization !== null) facts.push(m.quantization)
  // another server's model has no size here (the contract sends 0)
  if (!isRemoteModel(m)) facts.push(formatBytes(m.sizeBytes))
  if (m.problem === null) facts.push(m.hasChatTemplate ? 'chat template' : 'no chat template')
  return facts.join(' · ')
}

interface ModelRowProps {
  readonly model: ModelEntry
  readonly isDefault: boolean
  readonly onSetDefault: () => void
  readonly onRemove: () => void
}

function ModelRow({ model: m, isDefault, onSetDefault, onRemove }: ModelRowProps): JSX.Element {
  const [confirming, setConfirming] = useState(false)
  return (
    <li className={m.problem === null ? 'model-row' : 'model-row unusable'} data-model-id={m.id}>
      <div className="model-row-head">
        <span className="model-name">{m.name}</span>
        {isDefault && <span className="badge">Default</span>}
        <span className="spacer" />
        {!isDefault && m.problem === null && (
          <button type="button" className="button-ghost button-small" aria-label={`Set ${m.name} as default`} onClick={onSetDefault}>
            Set as default
          </button>
        )}
        {m.origin === 'added-file' && (
          <button type="button" className="button-ghost button-small" aria-label={`Remove ${m.name} from the list`} onClick={onRemove}>
            Remove
          </button>
        )}
        {m.origin === 'own-folder' && !confirming && (
          <button type="button" className="button-ghost button-small" aria-label={`Delete ${m.name}…`} onClick={() => setConfirming(true)}>
            Delete…
          </button>
        )}
      </div>
      <span className="model-facts">{modelFacts(m)}</span>
      <span className="model-path" title={m.path}>
        {ORIGINS[m.origin]}: {m.path}
      </span>
      {m.problem !== null && <span className="model-problem">Cannot be used: {m.problem}</span>}
      {confirming && (
        <ConfirmInline label={`Delete ${m.name}`} confirmLabel="Delete from disk" onConfirm={onRemove} onCancel={() => setConfirming(false)}>
          Delete {m.name} ({formatBytes(m.sizeBytes)}) from the disk? A catalog model can be downloaded again.
        </ConfirmInline>
      )}
    </li>
  )
}

/** The section. */
export function ModelLibrary({ state }: { readonly state: SettingsState }): JSX.Element {
  const [error, setError] = useState<string | null>(null)
  // this computer's models; the default-model picker offers the other servers' too
  const local = state.models.filter((m) => !isRemoteModel(m))
  const usable = local.filter((m) => m.problem === null)
  const defaultId = state.settings?.defaultModelId ?? null
  const report = (failure: UiError | null): void => setError(failure === null ? null : errorText(failure))
  return (
    <section className="settings-section" aria-labelledby="settings-models">
      <h3 id="settings-models">Models</h3>
      <div className="field">
        <ModelPicker id="settings-default-model" label="Default model for new chats" visibleLabel models={state.models} value={defaultId} onChange={(id) => void state.update({ defaultModelId: id })} />
      </div>
      {local.length === 0 ? (
        <p className="empty-note">No models found. Add a folder or a model file, or download one below.</p>
      ) : (
        <ul className="model-list" aria-label="Models found">
          {local.map((m) => (
            <ModelRow
              key={m.id}
              model={m}
              isDefault={m.id === defaultId}
              onSetDefault={() => void state.update({ defaultModelId: m.id }).then(report)}
              onRemove={() => void state.removeModel(m.id).then(report)}
            />
          ))}
        </ul>
      )}
      <FormError message={error} />
      <p className="field-help">
        {usable.length} usable of {local.length} found.{' '}
        <button type="button" className="button-link" onClick={() => void state.reload()}>
          Scan again
        </button>
      </p>
      <AddPathForm
        id="settings-model-file"
        label="Model file path"
        placeholder="/home/me/Downloads/model.gguf"
        buttonLabel="Add model file"
        emptyMessage="Type the full path of a model file (.gguf, or a llama2.c .bin)."
        onAdd={state.addFile}
      />
    </section>
  )
}
