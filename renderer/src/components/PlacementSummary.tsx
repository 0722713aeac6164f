/**
 * @file What a placement does, in words: per stage, which device runs which op groups and which matmuls are
 * split; then the app's explanation (a preset's fallback note, Auto's reasoning) and Auto's predicted speed.
 */
import type { JSX } from 'react'
import type { DeviceView, PlacementJson, PlacementView } from '../../../preload/api'
import { deviceName } from '../lib/devices'
import { formatRate } from '../lib/format'
import { PHASE_NAMES, summarizePhase } from '../lib/placement-edit'

interface PlacementSummaryProps {
  /** the placement described (null: there is no usable model to resolve one for) */
  readonly placement: PlacementJson | null
  /** true: this is an unsaved draft, not what runs next */
  readonly draft: boolean
  readonly view: PlacementView
  readonly devices: readonly DeviceView[]
}

/** The summary box. */
export function PlacementSummary({ placement, draft, view, devices }: PlacementSummaryProps): JSX.Element {
  const nameOf = (id: string): string => deviceName(id, devices)
  return (
    <section className="placement-summary" aria-labelledby="placement-summary-title">
      <h4 id="placement-summary-title">{draft ? 'After saving' : 'Runs next'}</h4>
      {placement === null ? (
        view.explanation !== null && !draft ? (
          <p className="form-error">
            {view.explanation} Pick another preset, or change the custom placement.
          </p>
        ) : (
          <p className="field-help">No usable model yet: the placement is worked out for the default model. Add or choose a model, then come back.</p>
        )
      ) : (
        <dl className="summary-list">
          {PHASE_NAMES.map((phase) => (
            <div key={phase} className="summary-phase">
              <dt>{phase === 'prefill' ? `Prefill (chunks of ${placement.prefillChunkTokens} tokens)` : 'Decode'}</dt>
              {summarizePhase(placement.phases[phase], view.opGroups, nameOf).map((line) => (
                <dd key={line}>{line}</dd>
              ))}
            </div>
          ))}
        </dl>
      )}
      {!draft && placement !== null && view.explanation !== null && <p className="placement-explanation">{view.explanation}</p>}
      {!draft && view.predicted !== null && (
        <p className="placement-predicted">
          Predicted on this machine: prefill {formatRate(view.predicted.prefillTokensPerSec)} tok/s · decode {formatRate(view.predicted.decodeTokensPerSec)} tok/s
        </p>
      )}
      {draft && <p className="field-help">Not saved yet. Save to use it for the next reply.</p>}
    </section>
  )
}
