/** @file The error line under a form, announced to screen readers as it appears; nothing when there is none. */
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
