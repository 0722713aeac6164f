/**
 * @file A destructive action asked about in place of the button that started it (delete a model from the disk,
 * discard a download): what it will do, the action, and a way back. The way back takes the focus when it appears,
 * so a second Enter or Space does not confirm by accident.
 */
import { useEffect, useRef, type JSX, type ReactNode } from 'react'

interface ConfirmInlineProps {
  /** the group's accessible name, e.g. "Delete model.gguf" */
  readonly label: string
  /** the question, saying what will be lost */
  readonly children: ReactNode
  readonly confirmLabel: string
  readonly cancelLabel?: string
  readonly onConfirm: () => void
  readonly onCancel: () => void
}

/** The question and its two buttons. */
export function ConfirmInline({ label, children, confirmLabel, cancelLabel = 'Cancel', onConfirm, onCancel }: ConfirmInlineProps): JSX.Element {
  const cancel = useRef<HTMLButtonElement>(null)
  useEffect(() => cancel.current?.focus(), [])
  return (
    <div className="model-confirm" role="group" aria-label={label}>
      <p>{children}</p>
      <button type="button" className="button-secondary button-small button-danger" onClick={onConfirm}>
        {confirmLabel}
      </button>
      <button ref={cancel} type="button" className="button-secondary button-small" onClick={onCancel}>
        {cancelLabel}
      </button>
    </div>
  )
}
