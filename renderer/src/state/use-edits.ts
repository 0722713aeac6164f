/**
 * @file A form value that follows what is saved until the user edits it. Copying the saved value into state
 * when a form mounts would freeze it: settings that load after the dialog opened, or change while it is
 * open, would never show. Here only the user's edit is state; without one the form shows `saved` as it is
 * now, and with one it keeps the user's text whatever arrives.
 */
import { useCallback, useState } from 'react'

/** What `useEdits` exposes. */
export interface Edits<T> {
  /** the user's edit, or else the saved value */
  readonly value: T
  /** true while an edit is shown instead of the saved value */
  readonly edited: boolean
  readonly edit: (value: T) => void
  /** Shows the saved value again. */
  readonly discard: () => void
  /**
   * Shows the saved value again if the edit is still `value` (by identity): after a save of `value`, so that
   * text typed while the save was under way is kept.
   */
  readonly discardIfStill: (value: T) => void
}

/** The value a form field shows, over `saved`. */
export function useEdits<T>(saved: T): Edits<T> {
  // Boxed, so that an edit to a falsy value (or null) still counts as an edit.
  const [edit, setEdit] = useState<{ readonly value: T } | null>(null)
  const change = useCallback((value: T) => setEdit({ value }), [])
  const discard = useCallback(() => setEdit(null), [])
  const discardIfStill = useCallback((value: T) => setEdit((current) => (current !== null && current.value === value ? null : current)), [])
  return { value: edit === null ? saved : edit.value, edited: edit !== null, edit: change, discard, discardIfStill }
}
