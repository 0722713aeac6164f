/**
 * @file "Summarize a file…": a button that opens the system's file picker (in Electron the OS open dialog, in a
 * browser its file chooser) through a hidden file input offering the types the app reads.
 */
import { useRef, type JSX } from 'react'
import { SUMMARIZE_ACCEPT } from '../lib/documents'
import { Icon } from './icons'

interface SummarizeFileButtonProps {
  /** the file picked (one; the picker allows no more) */
  readonly onFile: (file: File) => void
}

/** The button and its hidden input. */
export function SummarizeFileButton({ onFile }: SummarizeFileButtonProps): JSX.Element {
  const input = useRef<HTMLInputElement>(null)
  return (
    <>
      <button type="button" className="button-secondary summarize-file" onClick={() => input.current?.click()}>
        <Icon name="file" /> Summarize a file…
      </button>
      <input
        ref={input}
        type="file"
        hidden
        tabIndex={-1}
        aria-label="File to summarize"
        accept={SUMMARIZE_ACCEPT}
        onChange={(e) => {
          const file = e.currentTarget.files?.[0]
          // cleared, so picking the same file again is a change too ("summarize it again")
          e.currentTarget.value = ''
          if (file !== undefined) onFile(file)
        }}
      />
    </>
  )
}
