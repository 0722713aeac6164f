/** @file An inline text field for renaming: Enter or blur saves, Escape cancels. */
import { useEffect, useRef, useState, type JSX } from 'react'
import { LIMITS } from '../lib/limits'

/** Edits a title in place; calls onDone with the new title, or null when cancelled or unchanged. */
export function TitleField({ initial, label, onDone }: { initial: string; label: string; onDone: (title: string | null) => void }): JSX.Element {
  const [value, setValue] = useState(initial)
  const input = useRef<HTMLInputElement>(null)
  const done = useRef(false)
  useEffect(() => {
    input.current?.focus()
    input.current?.select()
  }, [])
  const finish = (save: boolean): void => {
    if (done.current) return
    done.current = true
    const title = value.trim()
    onDone(save && title !== '' && title !== initial ? title : null)
  }
  return (
    <input
      ref={input}
      className="title-field"
      aria-label={label}
      value={value}
      maxLength={LIMITS.maxTitleChars}
      onChange={(e) => setValue(e.target.value)}
      onBlur={() => finish(true)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') {
          e.preventDefault()
          finish(true)
        } else if (e.key === 'Escape') {
          e.preventDefault()
          e.stopPropagation()
          finish(false)
        }
      }}
    />
  )
}
