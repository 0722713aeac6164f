/** @file Short-lived notifications ("Conversation deleted · Undo"), each with an optional action. */
import { useCallback, useEffect, useRef, useState } from 'react'

/** One toast on screen. */
export interface Toast {
  readonly id: number
  readonly text: string
  readonly actionLabel?: string
  readonly onAction?: () => void
  /** when it disappears (ms since epoch) */
  readonly expiresAtMs: number
}

/** How long a toast stays (ms); long enough to reach Undo with the keyboard. */
export const TOAST_DURATION_MS = 8000

/** Toast list plus show/dismiss. */
export function useToasts(): {
  toasts: readonly Toast[]
  show: (text: string, action?: { label: string; run: () => void }) => void
  dismiss: (id: number) => void
} {
  const [toasts, setToasts] = useState<readonly Toast[]>([])
  const nextId = useRef(1)
  const timers = useRef(new Map<number, number>())

  const dismiss = useCallback((id: number) => {
    const timer = timers.current.get(id)
    if (timer !== undefined) window.clearTimeout(timer)
    timers.current.delete(id)
    setToasts((list) => list.filter((t) => t.id !== id))
  }, [])

  const show = useCallback(
    (text: string, action?: { label: string; run: () => void }) => {
      const id = nextId.current++
      const toast: Toast = {
        id,
        text,
        actionLabel: action?.label,
        onAction: action?.run,
        expiresAtMs: Date.now() + TOAST_DURATION_MS
      }
      setToasts((list) => [...list.slice(-2), toast])
      timers.current.set(
        id,
        window.setTimeout(() => dismiss(id), TOAST_DURATION_MS)
      )
    },
    [dismiss]
  )

  useEffect(() => {
    const pending = timers.current
    return () => {
      for (const timer of pending.values()) window.clearTimeout(timer)
    }
  }, [])

  return { toasts, show, dismiss }
}
