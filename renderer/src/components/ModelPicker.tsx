/**
 * @file The model picker: every model found, unusable ones listed but disabled with the reason. When other servers
 * offer models, the options are grouped: this computer's first, then one group per server.
 */
import type { JSX } from 'react'
import type { ModelEntry } from '../../../preload/api'
import { groupModels, missingModelName, modelLabel } from '../lib/models'

function ModelOption({ model: m }: { readonly model: ModelEntry }): JSX.Element {
  return (
    <option value={m.id} disabled={m.problem !== null} title={m.problem ?? m.path}>
      {modelLabel(m)}
      {m.problem !== null ? ' — unusable' : ''}
    </option>
  )
}

interface ModelPickerProps {
  readonly id: string
  readonly models: readonly ModelEntry[]
  readonly value: string | null
  readonly onChange: (modelId: string) => void
  readonly disabled?: boolean
  readonly label?: string
  /** show the label above the select (in forms) instead of only to screen readers */
  readonly visibleLabel?: boolean
}

/** A labelled select of models. */
export function ModelPicker({ id, models, value, onChange, disabled, label = 'Model', visibleLabel }: ModelPickerProps): JSX.Element {
  const known = value === null || models.some((m) => m.id === value)
  const groups = groupModels(models)
  return (
    <span className="model-picker">
      <label htmlFor={id} className={visibleLabel === true ? 'field-label' : 'visually-hidden'}>
        {label}
      </label>
      <select id={id} value={value ?? ''} disabled={disabled === true || models.length === 0} onChange={(e) => onChange(e.target.value)}>
        {models.length === 0 && <option value="">No models found</option>}
        {value === null && models.length > 0 && (
          <option value="" disabled>
            Choose a model
          </option>
        )}
        {!known && value !== null && (
          <option value={value} disabled>
            Missing: {missingModelName(value)}
          </option>
        )}
        {groups === null
          ? models.map((m) => <ModelOption key={m.id} model={m} />)
          : groups.map((g) => (
              <optgroup key={g.key} label={g.label}>
                {g.models.map((m) => (
                  <ModelOption key={m.id} model={m} />
                ))}
              </optgroup>
            ))}
      </select>
    </span>
  )
}
