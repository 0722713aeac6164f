/**
 * @file Files dropped on the window (to summarize them): whether files are being dragged over it, and the files of
 * a drop. A drop anywhere is taken, so the browser (or Electron) never navigates away to show the file itself.
 */
import { useEffect, useRef, useState } from 'react'

/** Installs the window's drag listeners; returns true while files are dragged over the window. */
export function useFileDrop(onDrop: (files: readonly File[]) => void): boolean {
  const [over, setOver] = useState(false)
  const latest = useRef(onDrop)
  latest.current = onDrop
  useEffect(() => {
    // dragenter/dragleave fire for every element crossed: count them, so moving over children does not flicker
    let depth = 0
    const carriesFiles = (e: DragEvent): boolean => e.dataTransfer?.types.includes('Files') ?? false
    const onEnter = (e: DragEvent): void => {
      if (!carriesFiles(e)) return
      e.preventDefault()
      depth++
      setOver(true)
    }
    const onOver = (e: DragEvent): void => {
      if (!carriesFiles(e)) return
      e.preventDefault()
      if (e.dataTransfer !== null) e.dataTransfer.dropEffect = 'copy'
    }
    const onLeave = (e: DragEvent): void => {
      if (!carriesFiles(e)) return
      depth = Math.max(0, depth - 1)
      if (depth === 0) setOver(false)
    }
    const onDropped = (e: DragEvent): void => {
      if (!carriesFiles(e)) return
      e.preventDefault()
      depth = 0
      setOver(false)
      const files = Array.from(e.dataTransfer?.files ?? [])
      // a modal dialog is in charge while open
      if (files.length > 0 && document.querySelector('dialog[open]') === null) latest.current(files)
    }
    window.addEventListener('dragenter', onEnter)
    window.addEventListener('dragover', onOver)
    window.addEventListener('dragleave', onLeave)
    window.addEventListener('drop', onDropped)
    return () => {
      window.removeEventListener('dragenter', onEnter)
      window.removeEventListener('dragover', onOver)
      window.removeEventListener('dragleave', onLeave)
      window.removeEventListener('drop', onDropped)
    }
  }, [])
  return over
}
