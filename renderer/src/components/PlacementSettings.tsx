/**
 * @file Where generation runs, in Settings → Devices. A preset is saved as soon as it is picked (the app
 * answers with what it resolves to here, and Auto with its explanation and predicted speed). Any edit of the
 * stage devices or the advanced fields turns the placement into an unsaved Custom one, saved with "Save
 * placement"; the app validates it against the model and the devices and a refusal is shown beside the
 * button, naming the field. A saved choice applies to the next reply.
 */
import { useState, type JSX } from 'react'
import type { PlacementJson, PresetName } from '../../../preload/api'
import { PRESETS } from '../lib/devices'
import { errorText, type UiError } from '../lib/errors'
import { customFrom, draftProblems, PHASE_NAMES, samePlacement, setStageDevice } from '../lib/placement-edit'
import type { DevicesState } from '../state/use-devices'
import { DeviceSelect } from './DeviceSelect'
import { FormStatus, type FormStatusValue } from './FormError'
import { PlacementAdvanced } from './PlacementAdvanced'
import { PlacementSummary } from './PlacementSummary'

/** The radio value of the hand-edited placement. */
type Choice = PresetName | 'custom'

const STAGE_LABELS = { prefill: 'Prefill (reading the prompt) runs on', decode: 'Decode (writing the reply) runs on' } as const

/** Said after a refused custom placement, after the app's own message. */
const CUSTOM_HINT = 'Change that setting (Advanced lists every entry), or pick a preset to start again.'

/** The placement part of Settings → Devices. */
export function PlacementSettings({ state }: { state: DevicesState }): JSX.Element {
  const { placement: view, devices } = state
  /** unsaved custom edits; null = the form shows what is saved */
  const [edits, setEdits] = useState<PlacementJson | null>(null)
  /** a preset being saved, shown checked until the app answers */
  const [pending, setPending] = useState<PresetName | null>(null)
  const [status, setStatus] = useState<FormStatusValue | null>(null)

  if (view === null) {
    return (
      <section className="settings-section" aria-labelledby="settings-placement">
        <h3 id="settings-placement">Placement</h3>
        {state.placementError !== null ? (
          <p className="form-error" role="alert">
            Could not read the placement. {errorText(state.placementError)}{' '}
            <button type="button" className="button-link" onClick={() => void state.reload()}>
              Try again
            </button>
          </p>
        ) : (
          <p className="field-help" aria-busy="true">
            Reading the placement…
          </p>
        )}
      </section>
    )
  }

  const savedCustom = view.setting.preset === 'custom' ? view.setting.placement : null
  const fallbackDevice = devices.find((d) => d.status === 'ready')?.id ?? 'cpu'
  /** what the stage and advanced fields show */
  const shown: PlacementJson = edits ?? savedCustom ?? customFrom(view.resolved, fallbackDevice, view.prefillChunk.defaultTokens)
  const checked: Choice = pending ?? (edits !== null ? 'custom' : view.setting.preset)
  const dirty = edits !== null && !samePlacement(edits, savedCustom)
  const problems = edits === null ? [] : draftProblems(edits, view.prefillChunk.maxTokens)
  const busy = state.saving

  const report = (failure: UiError | null, okText: string, hint = ''): void => {
    setStatus(failure === null ? { ok: true, text: okText } : { ok: false, text: `${errorText(failure)}${hint === '' ? '' : ` ${hint}`}` })
  }

  const pickPreset = (preset: PresetName): void => {
    setEdits(null)
    setPending(preset)
    setStatus(null)
    void state.setPlacement({ preset }).then((failure) => {
      setPending(null)
      report(failure, 'Saved. The next reply uses it.')
    })
  }

  const edit = (next: PlacementJson): void => {
    setEdits(customFrom(next, fallbackDevice, view.prefillChunk.defaultTokens))
    setStatus(null)
  }

  const save = (): void => {
    if (edits === null) return
    if (problems.length > 0) {
      setStatus({ ok: false, text: problems.join(' ') })
      return
    }
    setStatus(null)
    const placement = edits
    void state.setPlacement({ preset: 'custom', placement }).then((failure) => {
      if (failure === null) setEdits(null)
      report(failure, 'Saved. The next reply uses it.', CUSTOM_HINT)
    })
  }

  const presetWas = view.setting.preset === 'custom' ? 'your custom placement' : (PRESETS.find((p) => p.id === view.setting.preset)?.label ?? view.setting.preset)

  return (
    <section className="settings-section" aria-labelledby="settings-placement">
      <h3 id="settings-placement">Placement</h3>
      <p className="field-help">Which device runs each stage of generation. Changes apply to the next reply; no restart needed.</p>
      <fieldset className="preset-list" disabled={busy}>
        <legend className="visually-hidden">Placement</legend>
        {PRESETS.map((p) => (
          <label key={p.id} className={checked === p.id ? 'preset checked' : 'preset'}>
            <input type="radio" name="placement-preset" value={p.id} checked={checked === p.id} onChange={() => pickPreset(p.id)} />
            <span className="preset-text">
              <span className="preset-label">{p.label}</span>
              <span className="preset-help">{p.help}</span>
            </span>
          </label>
        ))}
        <label className={checked === 'custom' ? 'preset checked' : 'preset'}>
          <input type="radio" name="placement-preset" value="custom" checked={checked === 'custom'} onChange={() => edit(shown)} />
          <span className="preset-text">
            <span className="preset-label">Custom</span>
            <span className="preset-help">Choose the devices yourself, down to single op groups.</span>
          </span>
        </label>
      </fieldset>
      {busy && pending !== null && (
        <p className="field-help" role="status">
          Working out where {PRESETS.find((p) => p.id === pending)?.label ?? pending} runs on this machine…
        </p>
      )}

      <div className="stage-fields">
        {PHASE_NAMES.map((phase) => (
          <div key={phase} className="field">
            <DeviceSelect
              id={`stage-${phase}`}
              label={STAGE_LABELS[phase]}
              visibleLabel
              devices={devices}
              value={shown.phases[phase].device}
              disabled={busy}
              describedBy="stage-help"
              onChange={(v) => edit(setStageDevice(shown, phase, v))}
            />
          </div>
        ))}
        <p id="stage-help" className="field-help stage-help">
          The default device of each stage; op groups placed under Advanced go elsewhere.
        </p>
      </div>

      <PlacementAdvanced
        placement={shown}
        devices={devices}
        opGroups={view.opGroups}
        matmulGroups={view.matmulGroups}
        chunk={view.prefillChunk}
        disabled={busy}
        onChange={edit}
      />

      {(edits !== null || status !== null) && (
        <div className="form-actions placement-actions">
          <FormStatus status={status} />
          <span className="spacer" />
          {edits !== null && (
            <>
              <button
                type="button"
                className="button-ghost"
                disabled={busy}
                title={`Back to ${presetWas}`}
                onClick={() => {
                  setEdits(null)
                  setStatus(null)
                }}
              >
                Discard changes
              </button>
              <button type="button" className="button-primary" disabled={busy || !dirty} onClick={save}>
                {busy ? 'Saving…' : 'Save placement'}
              </button>
            </>
          )}
        </div>
      )}

      <PlacementSummary placement={edits ?? view.resolved} draft={dirty} view={view} devices={devices} />
    </section>
  )
}
