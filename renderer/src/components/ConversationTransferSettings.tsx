/**
 * @file Settings → General → Conversations: "Export all conversations (JSON)" saves every conversation in one file,
 * and "Import conversations…" reads such a file back (a file picker), then says what it did: "Imported 3
 * conversations; 1 was already here: “Trip plans”." A file too large is refused before it is read.
 */
import { useState, type JSX } from 'react'
import { describeError } from '../lib/errors'
import { allConversationsFileName, importSummary } from '../lib/export-files'
import { LIMITS } from '../lib/limits'
import { saveExport } from '../lib/save-file'
import { useApi } from '../state/api-context'
import { FilePickerButton } from './FilePickerButton'
import { FormStatus, type FormStatusValue } from './FormError'

/** The largest file, as the refusal names it. */
const MAX_IMPORT_MIB = LIMITS.maxImportBytes / 2 ** 20

/** The section; `onImported` refreshes the conversation list. */
export function ConversationTransferSettings({ onImported }: { onImported: () => void }): JSX.Element {
  const api = useApi()
  const [busy, setBusy] = useState(false)
  const [status, setStatus] = useState<FormStatusValue | null>(null)

  const exportAll = (): void => {
    setBusy(true)
    const fileName = allConversationsFileName()
    api.conversations
      .export(null, 'json')
      .then(
        (text) => {
          saveExport(text, fileName, 'json')
          setStatus({ ok: true, text: `Saved ${fileName}.` })
        },
        (e: unknown) => setStatus({ ok: false, text: `Could not export: ${describeError(e).detail}` })
      )
      .finally(() => setBusy(false))
  }

  const importFile = (file: File): void => {
    if (file.size > LIMITS.maxImportBytes) {
      setStatus({ ok: false, text: `${file.name} is larger than ${MAX_IMPORT_MIB} MiB, the largest file that can be imported.` })
      return
    }
    setBusy(true)
    setStatus({ ok: true, text: `Importing ${file.name}…` })
    file
      .text()
      .then((text) => api.conversations.import(text))
      .then(
        (result) => {
          setStatus({ ok: true, text: importSummary(result) })
          if (result.imported.length > 0) onImported()
        },
        (e: unknown) => setStatus({ ok: false, text: `Nothing was imported from ${file.name}: ${describeError(e).detail}` })
      )
      .finally(() => setBusy(false))
  }

  return (
    <section className="settings-section" aria-labelledby="settings-conversations">
      <h3 id="settings-conversations">Conversations</h3>
      <p className="field-help">
        Save every conversation in one JSON file — messages, stats, branches and summarized files — to keep a copy or to move them to another computer. Importing such a file
        adds its conversations; those already here are left as they are.
      </p>
      <div className="transfer-actions">
        <button type="button" className="button-secondary" disabled={busy} onClick={exportAll}>
          Export all conversations (JSON)
        </button>
        <FilePickerButton className="button-secondary" inputLabel="Conversations file to import" accept=".json,application/json" disabled={busy} onFile={importFile}>
          Import conversations…
        </FilePickerButton>
      </div>
      <FormStatus status={status} />
    </section>
  )
}
