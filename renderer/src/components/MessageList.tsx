/**
 * @file The scrolling message column. It follows a streaming reply while the reader is at the bottom and
 * stays put once they scroll up to read; a search hit scrolls its message into view and flashes it.
 */
import { useEffect, useLayoutEffect, useRef, type JSX, type ReactNode } from 'react'
import type { Message, ModelLoadProgress } from '../../../preload/api'
import { MessageItem } from './MessageItem'

/** Within this many pixels of the bottom counts as "at the bottom" (follow new text). */
const STICK_THRESHOLD_PX = 80

interface MessageListProps {
  readonly conversationKey: string
  readonly messages: readonly Message[]
  readonly busy: boolean
  /** what opening the model is doing before the streaming reply's first text, or null */
  readonly loadProgress: ModelLoadProgress | null
  /** a message to scroll to (from search), or null */
  readonly focusMessageId: string | null
  readonly onRegenerate: () => void
  readonly onEdit: (messageId: string, content: string) => void
  readonly onBranch?: (messageId: string) => void
  /** shown above the messages (the summarized file's card), scrolling with them */
  readonly header?: ReactNode
}

/** All messages of the open conversation. */
export function MessageList({ conversationKey, messages, busy, loadProgress, focusMessageId, onRegenerate, onEdit, onBranch, header }: MessageListProps): JSX.Element {
  const scroller = useRef<HTMLDivElement>(null)
  const stick = useRef(true)
  const lastReplyIndex = messages.findLastIndex((m) => m.role === 'assistant')

  useLayoutEffect(() => {
    stick.current = true
  }, [conversationKey])

  useLayoutEffect(() => {
    const el = scroller.current
    if (el !== null && stick.current && focusMessageId === null) el.scrollTop = el.scrollHeight
  }, [messages, focusMessageId])

  useEffect(() => {
    if (focusMessageId === null) return
    const el = scroller.current?.querySelector(`[data-message-id="${CSS.escape(focusMessageId)}"]`)
    if (el instanceof HTMLElement) {
      stick.current = false
      el.scrollIntoView({ block: 'center' })
    }
  }, [focusMessageId, messages.length])

  return (
    <div
      ref={scroller}
      className="message-scroll"
      onScroll={(e) => {
        const el = e.currentTarget
        stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < STICK_THRESHOLD_PX
      }}
    >
      {header !== undefined && <div className="message-column-header">{header}</div>}
      <div className="message-column" role="feed" aria-label="Messages" aria-busy={busy}>
        {messages.map((m, index) => (
          <MessageItem
            key={m.id}
            message={m}
            isLastReply={index === lastReplyIndex && index === messages.length - 1}
            busy={busy}
            loadProgress={m.status === 'streaming' ? loadProgress : null}
            highlighted={m.id === focusMessageId}
            onRegenerate={onRegenerate}
            onEdit={onEdit}
            onBranch={onBranch}
          />
        ))}
      </div>
    </div>
  )
}
