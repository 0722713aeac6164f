/** @file Window-wide keyboard shortcuts: Esc stops, Ctrl/Cmd+N new chat, Ctrl/Cmd+K search. */
import { useEffect, useRef } from 'react'
import { IS_MAC } from '../lib/platform'

/** Handlers for the global shortcuts. */
export interface ShortcutHandlers {
  readonly onStop: () => void
  readonly onNewChat: () => void
  readonly onSearch: () => void
}

/** Installs one keydown listener; handlers are read fresh on every key press. */
export function useShortcuts(handlers: ShortcutHandlers): void {
  const latest = useRef(handlers)
  latest.current = handlers
  useEffect(() => {
    const onKeyDown = (e: KeyboardEvent): void => {
      if (e.defaultPrevented || e.isComposing) return
      // A modal dialog handles its own keys (Esc closes it).
      if (document.querySelector('dialog[open]') !== null) return
      const mod = IS_MAC ? e.metaKey && !e.ctrlKey : e.ctrlKey && !e.metaKey
      if (e.key === 'Escape' && !mod && !e.altKey) {
        latest.current.onStop()
      } else if (mod && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'n') {
        e.preventDefault()
        latest.current.onNewChat()
      } else if (mod && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'k') {
        e.preventDefault()
        latest.current.onSearch()
      }
    }
    window.addEventListener('keydown', onKeyDown)
    return () => window.removeEventListener('keydown', onKeyDown)
  }, [])
}
