/**
 * @file The line under a form that says how it went: an error (announced at once, as an alert) or a success (a
 * polite status); nothing when there is nothing to say.
 */
import type { JSX } from 'react'

/** `message`, or nothing when it is null. */
export function FormError({ message }: { readonly message: string | null }): JSX.Element | null {
  if (message === null) return null
  return (
    <p className="form-error" role="alert">
      {message}
    </p>
  )
}

/** What a form says after an action: whether it worked, and the sentence. */
export interface FormStatusValue {
  readonly ok: boolean
  readonly text: string
}

/** A success or an error line; nothing when `status` is null. */
export function FormStatus({ status }: { readonly status: FormStatusValue | null }): JSX.Element | null {
  if (status === null) return null
  if (!status.ok) return <FormError message={status.text} />
  return (
    <p className="form-ok" role="status">
      {status.text}
    </p>
  )
}
