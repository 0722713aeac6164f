/**
 * @file Streamed text, batched per animation frame: a small model can produce hundreds of tokens per second, and
 * re-rendering per token would cost more than generating it.
 */
import { useCallback, useEffect, useRef, type Dispatch, type SetStateAction } from 'react'
import type { Message } from '../../../preload/api'

/** How long a hidden tab waits before showing queued text (ms); hidden tabs get no animation frames. */
const HIDDEN_FLUSH_MS = 200

/** Queues text per message and appends it to `setMessages`' list once per frame (`flush` does it now). */
export function useDeltaBatch(setMessages: Dispatch<SetStateAction<readonly Message[]>>): {
  readonly queue: (messageId: string, text: string) => void
  readonly flush: () => void
} {
  const pending = useRef(new Map<string, string>())
  const handle = useRef<number | null>(null)

  const flush = useCallback(() => {
    handle.current = null
    if (pending.current.size === 0) return
    const deltas = new Map(pending.current)
    pending.current.clear()
    setMessages((list) => list.map((m) => (deltas.has(m.id) ? { ...m, content: m.content + (deltas.get(m.id) ?? '') } : m)))
  }, [setMessages])

  const queue = useCallback(
    (messageId: string, text: string) => {
      pending.current.set(messageId, (pending.current.get(messageId) ?? '') + text)
      if (handle.current !== null) return
      handle.current = document.hidden ? window.setTimeout(flush, HIDDEN_FLUSH_MS) : window.requestAnimationFrame(flush)
    },
    [flush]
  )

  useEffect(
    () => () => {
      if (handle.current !== null) {
        window.cancelAnimationFrame(handle.current)
        window.clearTimeout(handle.current)
      }
    },
    []
  )

  return { queue, flush }
}
