/**
 * @file The chat header's Export button: a disclosure that shows "Export as Markdown" and "Export as JSON". Escape
 * closes it and puts the focus back on the button, as choosing does; a click or Tab elsewhere closes it too.
 */
import { useEffect, useId, useRef, useState, type JSX } from 'react'
import type { ExportFormat } from '../../../preload/api'
import { Icon } from './icons'

const CHOICES: readonly { format: ExportFormat; label: string; help: string }[] = [
  { format: 'markdown', label: 'Export as Markdown', help: 'to read or share' },
  { format: 'json', label: 'Export as JSON', help: 'to import again' }
]

/** The button and its choices; `onExport` saves the conversation in the chosen format. */
export function ExportMenu({ onExport }: { onExport: (format: ExportFormat) => void }): JSX.Element {
  const [open, setOpen] = useState(false)
  const menuId = useId()
  const root = useRef<HTMLDivElement>(null)
  const toggle = useRef<HTMLButtonElement>(null)
  const first = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    if (!open) return
    first.current?.focus()
    const onPointer = (e: PointerEvent): void => {
      if (e.target instanceof Node && root.current?.contains(e.target) !== true) setOpen(false)
    }
    document.addEventListener('pointerdown', onPointer)
    return () => document.removeEventListener('pointerdown', onPointer)
  }, [open])

  const close = (): void => {
    setOpen(false)
    toggle.current?.focus()
  }

  return (
    <div
      ref={root}
      className="export-menu"
      // Tabbing out of the choices closes them, like a click elsewhere
      onBlur={(e) => {
        if (open && !(e.relatedTarget instanceof Node && root.current?.contains(e.relatedTarget) === true)) setOpen(false)
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape' && open) {
          // handled: the app's Esc shortcut (stop the reply) skips it
          e.preventDefault()
          close()
        }
      }}
    >
      <button
        ref={toggle}
        type="button"
        className={open ? 'icon-button toggled' : 'icon-button'}
        aria-label="Export conversation"
        aria-expanded={open}
        aria-controls={menuId}
        title="Export this conversation"
        onClick={() => setOpen((v) => !v)}
      >
        <Icon name="download" />
      </button>
      <div id={menuId} className="export-choices" hidden={!open}>
        {CHOICES.map((c, i) => (
          <button
            key={c.format}
            ref={i === 0 ? first : undefined}
            type="button"
            className="export-choice"
            onClick={() => {
              close()
              onExport(c.format)
            }}
          >
            {c.label}
            <span className="export-choice-help">{c.help}</span>
          </button>
        ))}
      </div>
    </div>
  )
}
