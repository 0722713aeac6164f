/** @file Temperature, top-p and max tokens as labelled number fields, validated into SamplingSettings. */
import type { JSX } from 'react'
import type { SamplingSettings } from '../../../preload/api'
import { LIMITS } from '../lib/limits'

/** Accepted ranges; the engine clamps too, these keep the UI honest. */
export const SAMPLING_RANGES = {
  temperature: { min: 0, max: LIMITS.maxTemperature, step: 0.05 },
  topP: { min: 0.01, max: 1, step: 0.01 },
  maxTokens: { min: 1, max: LIMITS.maxReplyTokens, step: 1 }
} as const

/** The fields as typed (strings, so half-typed numbers are allowed). */
export interface SamplingDraft {
  readonly temperature: string
  readonly topP: string
  readonly maxTokens: string
}

/** Settings to editable strings. */
export function toDraft(s: SamplingSettings): SamplingDraft {
  return { temperature: String(s.temperature), topP: String(s.topP), maxTokens: String(s.maxTokens) }
}

/** Validated settings, or a message naming the field that is wrong. */
export function parseDraft(d: SamplingDraft): { ok: true; value: SamplingSettings } | { ok: false; error: string } {
  const temperature = Number(d.temperature)
  const topP = Number(d.topP)
  const maxTokens = Number(d.maxTokens)
  const r = SAMPLING_RANGES
  if (d.temperature.trim() === '' || !(temperature >= r.temperature.min && temperature <= r.temperature.max)) {
    return { ok: false, error: `Temperature must be between ${r.temperature.min} and ${r.temperature.max}.` }
  }
  if (d.topP.trim() === '' || !(topP >= r.topP.min && topP <= r.topP.max)) {
    return { ok: false, error: `Top-p must be between ${r.topP.min} and ${r.topP.max}.` }
  }
  if (!Number.isInteger(maxTokens) || maxTokens < r.maxTokens.min || maxTokens > r.maxTokens.max) {
    return { ok: false, error: `Max tokens must be a whole number from ${r.maxTokens.min} to ${r.maxTokens.max}.` }
  }
  return { ok: true, value: { temperature, topP, maxTokens } }
}

interface FieldsProps {
  readonly idPrefix: string
  readonly value: SamplingDraft
  readonly onChange: (value: SamplingDraft) => void
}

/** Three number fields with help text. */
export function SamplingFields({ idPrefix, value, onChange }: FieldsProps): JSX.Element {
  const field = (key: keyof SamplingDraft, label: string, help: string): JSX.Element => {
    const range = SAMPLING_RANGES[key]
    const id = `${idPrefix}-${key}`
    return (
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <input
          id={id}
          type="number"
          inputMode="decimal"
          min={range.min}
          max={range.max}
          step={range.step}
          value={value[key]}
          aria-describedby={`${id}-help`}
          onChange={(e) => onChange({ ...value, [key]: e.target.value })}
        />
        <p id={`${id}-help`} className="field-help">
          {help}
        </p>
      </div>
    )
  }
  return (
    <div className="sampling-fields">
      {field('temperature', 'Temperature', '0 always picks the likeliest word; higher is more varied.')}
      {field('topP', 'Top-p', 'Sample only from the most likely words that add up to this share.')}
      {field('maxTokens', 'Max tokens', 'Longest reply, in tokens.')}
    </div>
  )
}
