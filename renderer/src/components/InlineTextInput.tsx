/** @file A one-line text input of an inline form, labelled for screen readers only (the placeholder shows what goes in). */
import type { JSX } from 'react'

/** The input and its visually hidden label; no spell checking (paths and names). */
export function InlineTextInput(props: {
  readonly id: string
  readonly label: string
  readonly value: string
  readonly maxLength: number
  readonly placeholder: string
  readonly onChange: (value: string) => void
}): JSX.Element {
  return (
    <>
      <label htmlFor={props.id} className="visually-hidden">
        {props.label}
      </label>
      <input id={props.id} value={props.value} maxLength={props.maxLength} placeholder={props.placeholder} spellCheck={false} onChange={(e) => props.onChange(e.target.value)} />
    </>
  )
}
