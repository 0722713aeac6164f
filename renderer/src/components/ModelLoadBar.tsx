/**
 * @file What opening the model is doing before a reply starts: the first open of a large model compiles it
 * for this computer (seconds to minutes), so the reply's place shows a progress bar with words, not dots.
 */
import type { JSX } from 'react'
import type { ModelLoadProgress } from '../../../preload/api'
import { formatLoadProgress } from '../lib/format'

/** A labelled progress bar; indeterminate while the stage has no measure. */
export function ModelLoadBar({ progress }: { readonly progress: ModelLoadProgress }): JSX.Element {
  const text = formatLoadProgress(progress)
  const measured = progress.total > 0
  return (
    <div className="model-load" data-stage={progress.stage}>
      <progress aria-label={text} {...(measured ? { value: progress.done, max: progress.total } : {})} />
      <p className="model-load-text">{text}</p>
    </div>
  )
}
