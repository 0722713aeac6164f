/**
 * @file What a file's summary is doing, above the composer: a progress bar over the map-reduce steps with the time
 * left and a Cancel button; and, when the app answered with a summary it had made before, a notice offering to
 * make it again.
 */
import type { JSX } from 'react'
import { formatSummaryProgress } from '../lib/format'
import type { SummaryRun } from '../state/chat-state'
import { Icon } from './icons'

/** The running summary's progress; indeterminate while the file is read and before the first step is counted. */
export function SummaryProgress({ run, onCancel }: { readonly run: SummaryRun; readonly onCancel: () => void }): JSX.Element {
  const text = formatSummaryProgress(run.fileName, run)
  const measured = run.phase === 'summarizing' && run.total > 0
  return (
    <div className="summary-progress">
      <div className="summary-progress-main">
        <progress aria-label={`Summarizing ${run.fileName}`} {...(measured ? { value: run.done, max: run.total } : {})} />
        <p className="summary-progress-text">{text}</p>
      </div>
      <button type="button" className="button-secondary button-small" onClick={onCancel}>
        Cancel
      </button>
    </div>
  )
}

interface ReusedNoticeProps {
  readonly fileName: string
  readonly onSummarizeAgain: () => void
  readonly onDismiss: () => void
}

/** "report.pdf was summarized before; this is the stored summary." with Summarize again. */
export function ReusedSummaryNotice({ fileName, onSummarizeAgain, onDismiss }: ReusedNoticeProps): JSX.Element {
  return (
    <div className="summary-notice" role="status">
      <Icon name="file" />
      <p className="summary-notice-text">{fileName} was summarized before; this is the stored summary.</p>
      <div className="summary-notice-actions">
        <button type="button" className="button-secondary button-small" onClick={onSummarizeAgain}>
          Summarize again
        </button>
        <button type="button" className="icon-button" aria-label="Dismiss notice" onClick={onDismiss}>
          <Icon name="close" size={16} />
        </button>
      </div>
    </div>
  )
}
