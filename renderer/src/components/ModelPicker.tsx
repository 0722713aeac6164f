/** @file The model picker: every model found, unusable ones listed but disabled with the reason. */
import type { JSX } from 'react'
import type { ModelEntry } from '../../../preload/api'
import { formatBytes, formatParameters } from '../lib/format'

/** One line describing a model in the picker. */
export function modelLabel(model: ModelEntry): string {
  const details = [model.format === 'hf' ? 'HF' : model.format === 'llama2c' ? 'llama2.c' : 'GGUF']
  if (model.parameters !== null) details.push(formatParameters(model.parameters))
  if (model.quantization !== null) details.push(model.quantization)
  details.push(formatBytes(model.sizeBytes))
  return `${model.name} (${details.join(', ')})`
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
            Missing: {value.split(/[\\/]/).at(-1) ?? value}
          </option>
        )}
        {models.map((m) => (
          <option key={m.id} value={m.id} disabled={m.problem !== null} title={m.problem ?? m.path}>
            {modelLabel(m)}
            {m.problem !== null ? ' — unusable' : ''}
          </option>
        ))}
      </select>
    </span>
  )
}
