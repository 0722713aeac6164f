/**
 * @file A setting made of a switch and a number (the local API and its port, W8A8 and the share of layers without
 * a shadow). Both are saved together: flipping the switch saves at once with the number as typed, Save (or Enter
 * in the field) saves the number with the switch as it is. The caller checks the number and says how it went.
 */
import type { JSX } from 'react'

interface SwitchWithNumberProps {
  readonly switchLabel: string
  readonly checked: boolean
  readonly numberId: string
  readonly numberLabel: string
  readonly min: number
  readonly max: number
  readonly step?: number
  /** the number as typed (checked by `onSave`) */
  readonly value: string
  readonly onValueChange: (value: string) => void
  readonly onSave: (checked: boolean, value: string) => void
}

/** The switch on its own row, then the number's inline form with its Save button. */
export function SwitchWithNumber(props: SwitchWithNumberProps): JSX.Element {
  const { checked, value, onSave } = props
  return (
    <>
      <label className="checkbox-row">
        <input type="checkbox" checked={checked} onChange={(e) => onSave(e.target.checked, value)} /> {props.switchLabel}
      </label>
      <form
        className="inline-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault()
          onSave(checked, value)
        }}
      >
        <label htmlFor={props.numberId}>{props.numberLabel}</label>
        <input id={props.numberId} type="number" min={props.min} max={props.max} step={props.step} value={value} onChange={(e) => props.onValueChange(e.target.value)} />
        <button type="submit" className="button-secondary">
          Save
        </button>
      </form>
    </>
  )
}
