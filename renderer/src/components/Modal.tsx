/** @file A modal dialog on the native <dialog> element: focus is trapped, Esc closes, focus returns after. */
import { useEffect, useId, useRef, type JSX, type ReactNode } from 'react'
import { Icon } from './icons'

interface ModalProps {
  readonly title: string
  readonly onClose: () => void
  readonly children: ReactNode
  readonly className?: string
}

/** Shown while mounted. */
export function Modal({ title, onClose, children, className }: ModalProps): JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null)
  // Unique per dialog: a fixed id would repeat if two dialogs were ever mounted at once (one opened from
  // another), and aria-labelledby would then name the wrong one.
  const titleId = useId()
  useEffect(() => {
    const el = dialog.current
    const opener = document.activeElement
    if (el !== null && !el.open) el.showModal()
    return () => {
      el?.close()
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus()
    }
  }, [])
  return (
    <dialog
      ref={dialog}
      className={className === undefined ? 'modal' : `modal ${className}`}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault()
        onClose()
      }}
      onClick={(e) => {
        // A click on the backdrop lands on the <dialog> itself.
        if (e.target === e.currentTarget) onClose()
      }}
    >
      <div className="modal-inner">
        <header className="modal-header">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>
            <Icon name="close" />
          </button>
        </header>
        <div className="modal-body">{children}</div>
      </div>
    </dialog>
  )
}
