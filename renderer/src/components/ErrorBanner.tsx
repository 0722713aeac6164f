/** @file An error shown above the composer: what happened, what to do next, and a button that does it. */
import type { JSX } from 'react'
import type { UiError } from '../lib/errors'
import { Icon } from './icons'

interface ErrorBannerProps {
  readonly error: UiError
  readonly onOpenSettings: () => void
  readonly onRetry?: () => void
  readonly onDismiss?: () => void
}

/** role=alert, so screen readers announce it when it appears. */
export function ErrorBanner({ error, onOpenSettings, onRetry, onDismiss }: ErrorBannerProps): JSX.Element {
  return (
    <div className="error-banner" role="alert">
      <Icon name="alert" />
      <div className="error-banner-text">
        <strong>{error.title}</strong>
        <span className="error-detail">{error.detail}</span>
        <span className="hint">{error.hint}</span>
      </div>
      <div className="error-banner-actions">
        {error.action === 'settings' && (
          <button type="button" className="button-secondary button-small" onClick={onOpenSettings}>
            Open Settings
          </button>
        )}
        {error.action === 'retry' && onRetry !== undefined && (
          <button type="button" className="button-secondary button-small" onClick={onRetry}>
            Try again
          </button>
        )}
        {error.action === 'reload' && (
          <button type="button" className="button-secondary button-small" onClick={() => window.location.reload()}>
            Reload
          </button>
        )}
        {onDismiss !== undefined && (
          <button type="button" className="icon-button" aria-label="Dismiss error" onClick={onDismiss}>
            <Icon name="close" size={16} />
          </button>
        )}
      </div>
    </div>
  )
}
