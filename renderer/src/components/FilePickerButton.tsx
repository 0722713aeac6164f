/**
 * @file A button that opens the system's file picker (in Electron the OS open dialog, in a browser its file chooser)
 * through a hidden file input, and hands over the one file picked.
 */
import { useRef, type JSX, type ReactNode } from 'react'

interface FilePickerButtonProps {
  /** what the button shows */
  readonly children: ReactNode
  readonly className: string
  /** the hidden input's name (it is not reachable by keyboard; the button is) */
  readonly inputLabel: string
  /** the types the picker offers (the input's `accept`) */
  readonly accept: string
  readonly disabled?: boolean
  readonly onFile: (file: File) => void
}

/** The button and its hidden input. */
export function FilePickerButton({ children, className, inputLabel, accept, disabled = false, onFile }: FilePickerButtonProps): JSX.Element {
  const input = useRef<HTMLInputElement>(null)
  return (
    <>
      <button type="button" className={className} disabled={disabled} onClick={() => input.current?.click()}>
        {children}
      </button>
      <input
        ref={input}
        type="file"
        hidden
        tabIndex={-1}
        aria-label={inputLabel}
        accept={accept}
        onChange={(e) => {
          const file = e.currentTarget.files?.[0]
          // cleared, so picking the same file again is a change too
          e.currentTarget.value = ''
          if (file !== undefined) onFile(file)
        }}
      />
    </>
  )
}
