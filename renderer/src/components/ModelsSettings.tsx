/**
 * @file Settings → Models: everything about which models Tandem can use, in one tab. The model folders (add, remove,
 * missing ones flagged), the models found and added (ModelLibrary, with the default for new chats and "Add model
 * file"), the catalog to download from (ModelCatalog), and other servers whose models can be used (RemoteServers).
 */
import { useState, type JSX } from 'react'
import { errorText } from '../lib/errors'
import type { SettingsState } from '../state/use-settings'
import { AddPathForm } from './AddPathForm'
import { FormError } from './FormError'
import { Icon } from './icons'
import { ModelCatalog } from './ModelCatalog'
import { ModelLibrary } from './ModelLibrary'
import { RemoteServers } from './RemoteServers'

function FoldersSection({ state }: { state: SettingsState }): JSX.Element {
  // a folder that could not be removed
  const [error, setError] = useState<string | null>(null)
  return (
    <section className="settings-section" aria-labelledby="settings-folders">
      <h3 id="settings-folders">Model folders</h3>
      <p className="field-help">Tandem looks for GGUF files, llama2.c checkpoints and Hugging Face model folders here.</p>
      <ul className="folder-list">
        {state.folders.map((f) => (
          <li key={f.path} className={f.exists && f.problem === null ? 'folder' : 'folder missing'}>
            <Icon name={f.exists && f.problem === null ? 'folder' : 'alert'} size={16} />
            <span className="folder-path" title={f.path}>
              {f.path}
            </span>
            {f.builtIn && <span className="badge">Built in</span>}
            {!f.exists && <span className="badge warn">Missing: folder not found</span>}
            {f.problem !== null && <span className="badge warn folder-problem">{f.problem}</span>}
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
      <AddPathForm
        id="settings-folder-path"
        label="Folder path"
        placeholder="/home/me/models"
        buttonLabel="Add folder"
        emptyMessage="Type the full path of a folder that holds models."
        onAdd={state.addFolder}
      />
      <FormError message={error} />
    </section>
  )
}

/** The Models tab of the Settings dialog. */
export function ModelsSettings({ state }: { state: SettingsState }): JSX.Element {
  return (
    <>
      <FoldersSection state={state} />
      <ModelLibrary state={state} />
      <ModelCatalog models={state.models} onInstalled={() => void state.reload()} />
      <RemoteServers state={state} />
    </>
  )
}
