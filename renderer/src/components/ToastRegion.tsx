/** @file Toasts at the bottom of the window (a polite live region), e.g. "Conversation deleted · Undo". */
import type { JSX } from 'react'
import type { Toast } from '../state/use-toasts'
import { Icon } from './icons'

/** Renders the toast list. */
export function ToastRegion({ toasts, onDismiss }: { toasts: readonly Toast[]; onDismiss: (id: number) => void }): JSX.Element {
  return (
    <div className="toast-region" role="region" aria-label="Notifications" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} className="toast" role="status">
          <span>{t.text}</span>
          {t.actionLabel !== undefined && t.onAction !== undefined && (
            <button
              type="button"
              className="button-link toast-action"
              onClick={() => {
                t.onAction?.()
                onDismiss(t.id)
              }}
            >
              {t.actionLabel}
            </button>
          )}
          <button type="button" className="icon-button" aria-label="Dismiss notification" onClick={() => onDismiss(t.id)}>
            <Icon name="close" size={14} />
          </button>
        </div>
      ))}
    </div>
  )
}
