/**
 * @file A path typed in full and an Add button (the renderer cannot browse the disk, in Electron or a browser): a
 * models folder, a model file. The path is cleared once added, and kept with the app's reason beside it when refused.
 */
import { useState, type JSX } from 'react'
import { errorText, type UiError } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import { FormError } from './FormError'
import { InlineTextInput } from './InlineTextInput'

interface AddPathFormProps {
  readonly id: string
  /** the field's accessible name */
  readonly label: string
  readonly placeholder: string
  readonly buttonLabel: string
  /** said when Add is pressed with nothing typed */
  readonly emptyMessage: string
  /** resolves to the error to show, or null when added */
  readonly onAdd: (path: string) => Promise<UiError | null>
}

/** The form and its error line. */
export function AddPathForm({ id, label, placeholder, buttonLabel, emptyMessage, onAdd }: AddPathFormProps): JSX.Element {
  const [path, setPath] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  return (
    <>
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault()
          const trimmed = path.trim()
          if (trimmed === '') {
            setError(emptyMessage)
            return
          }
          setBusy(true)
          void onAdd(trimmed).then((failure) => {
            setBusy(false)
            setError(failure === null ? null : errorText(failure))
            if (failure === null) setPath('')
          })
        }}
      >
        <InlineTextInput id={id} label={label} value={path} maxLength={LIMITS.maxPathChars} placeholder={placeholder} onChange={setPath} />
        <button type="submit" className="button-secondary" disabled={busy}>
          {buttonLabel}
        </button>
      </form>
      <FormError message={error} />
    </>
  )
}
