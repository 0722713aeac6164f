/**
 * @file "Summarize a file…": a button that opens the system's file picker (in Electron the OS open dialog, in a
 * browser its file chooser) offering the types the app reads; picking the same file again summarizes it again.
 */
import type { JSX } from 'react'
import { SUMMARIZE_ACCEPT } from '../lib/documents'
import { FilePickerButton } from './FilePickerButton'
import { Icon } from './icons'

interface SummarizeFileButtonProps {
  /** the file picked (one; the picker allows no more) */
  readonly onFile: (file: File) => void
}

/** The button and its hidden input. */
export function SummarizeFileButton({ onFile }: SummarizeFileButtonProps): JSX.Element {
  return (
    <FilePickerButton className="button-secondary summarize-file" inputLabel="File to summarize" accept={SUMMARIZE_ACCEPT} onFile={onFile}>
      <Icon name="file" /> Summarize a file…
    </FilePickerButton>
  )
}
