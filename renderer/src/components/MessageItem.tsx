/**
 * @file One message: the text (Markdown for replies, plain for the user's own words), its stats line (with
 * each device's busy time behind a disclosure), and actions (Copy, Edit and resend, Regenerate) that show
 * on hover and are always reachable by keyboard.
 */
import { memo, useState, type JSX } from 'react'
import type { Message, ModelLoadProgress } from '../../../preload/api'
import { copyText } from '../lib/clipboard'
import { formatMs, formatStatsDetail, formatStatsLine } from '../lib/format'
import { LIMITS } from '../lib/limits'
import { Markdown } from '../markdown/Markdown'
import { PENDING_ASSISTANT_ID } from '../state/use-chat'
import { Icon } from './icons'
import { ModelLoadBar } from './ModelLoadBar'

/** User messages longer than this (characters) start collapsed. */
const COLLAPSE_ABOVE_CHARS = 4000

interface MessageItemProps {
  readonly message: Message
  /** this reply is the last one, so it can be regenerated */
  readonly isLastReply: boolean
  /** a request is running (actions that start one are disabled) */
  readonly busy: boolean
  /** what opening the model is doing before this (streaming) reply's first text, or null */
  readonly loadProgress?: ModelLoadProgress | null
  readonly highlighted: boolean
  readonly onRegenerate: () => void
  readonly onEdit: (messageId: string, content: string) => void
  /** starts a new conversation from this message (absent: not offered, e.g. in a draft) */
  readonly onBranch?: (messageId: string) => void
}

function StatusLine({ message }: { message: Message }): JSX.Element | null {
  if (message.role !== 'assistant') return null
  if (message.status === 'streaming') {
    return <p className="message-meta">{message.content === '' ? 'Thinking…' : 'Generating…'}</p>
  }
  const parts: string[] = []
  if (message.stats !== null) parts.push(formatStatsLine(message.stats))
  if (message.status === 'stopped') parts.push('Stopped')
  if (parts.length === 0) return null
  const busy = message.stats?.deviceBusy ?? []
  return (
    <>
      <p className="message-meta" title={message.stats !== null ? formatStatsDetail(message.stats) : undefined}>
        {parts.join(' · ')}
      </p>
      {busy.length > 0 && (
        <details className="stats-devices">
          <summary>Device time</summary>
          <ul aria-label="Busy time per device">
            {busy.map((d) => (
              <li key={d.id}>
                {d.name}: {formatMs(d.busyMs)} busy
              </li>
            ))}
          </ul>
        </details>
      )}
    </>
  )
}

function UserText({ content }: { content: string }): JSX.Element {
  const [expanded, setExpanded] = useState(false)
  const long = content.length > COLLAPSE_ABOVE_CHARS
  return (
    <>
      <div className="user-text">{long && !expanded ? `${content.slice(0, COLLAPSE_ABOVE_CHARS)}…` : content}</div>
      {long && (
        <button type="button" className="button-link" aria-expanded={expanded} onClick={() => setExpanded((v) => !v)}>
          {expanded ? 'Show less' : `Show all (${content.length.toLocaleString()} characters)`}
        </button>
      )}
    </>
  )
}

function EditBox({ initial, onSave, onCancel }: { initial: string; onSave: (text: string) => void; onCancel: () => void }): JSX.Element {
  const [text, setText] = useState(initial)
  const empty = text.trim() === ''
  return (
    <form
      className="edit-box"
      onSubmit={(e) => {
        e.preventDefault()
        if (!empty) onSave(text)
      }}
    >
      <textarea
        aria-label="Edit message"
        value={text}
        maxLength={LIMITS.maxMessageChars}
        autoFocus
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault()
            e.stopPropagation()
            onCancel()
          } else if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault()
            if (!empty) onSave(text)
          }
        }}
      />
      <div className="edit-box-actions">
        <button type="button" className="button-ghost" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="button-primary" disabled={empty}>
          Save and send
        </button>
      </div>
    </form>
  )
}

/** A message in the conversation. */
export const MessageItem = memo(function MessageItem(props: MessageItemProps): JSX.Element {
  const { message, busy } = props
  const [editing, setEditing] = useState(false)
  const [copied, setCopied] = useState(false)
  const isUser = message.role === 'user'
  const isPending = message.id.startsWith('pending-')
  const streaming = message.status === 'streaming'

  const copy = (): void => {
    void copyText(message.content).then((ok) => {
      setCopied(ok)
      if (ok) window.setTimeout(() => setCopied(false), 1500)
    })
  }

  const classes = ['message', message.role, props.highlighted ? 'highlighted' : '', streaming ? 'streaming' : ''].filter(Boolean).join(' ')
  return (
    <article className={classes} data-message-id={message.id} data-status={message.status} aria-label={isUser ? 'Your message' : 'Assistant reply'}>
      <div className="message-bubble">
        {editing ? (
          <EditBox
            initial={message.content}
            onCancel={() => setEditing(false)}
            onSave={(text) => {
              setEditing(false)
              props.onEdit(message.id, text)
            }}
          />
        ) : isUser ? (
          <UserText content={message.content} />
        ) : props.loadProgress != null && message.content === '' ? (
          <ModelLoadBar progress={props.loadProgress} />
        ) : message.id === PENDING_ASSISTANT_ID || (streaming && message.content === '') ? (
          <span className="typing" role="img" aria-label="Waiting for the reply">
            <span />
            <span />
            <span />
          </span>
        ) : (
          <div className="reply-text">
            <Markdown text={message.content} />
          </div>
        )}
        {message.status === 'error' && (
          <div className="message-error">
            <Icon name="alert" size={16} />
            <p>
              {/* a reply can fail part-way (another server's connection dropped): its text so far stays above */}
              <strong>{message.content === '' ? 'No reply.' : 'The reply broke off.'}</strong> {message.error ?? 'The reply failed.'}
              {props.isLastReply && <span className="hint"> Fix the cause, then use Regenerate to try again.</span>}
            </p>
          </div>
        )}
      </div>
      <div className="message-footer">
        <StatusLine message={message} />
        {!editing && !isPending && !streaming && (
          <div className="message-actions">
            <button type="button" className="icon-button" aria-label={isUser ? 'Copy message' : 'Copy reply'} title="Copy" onClick={copy}>
              <Icon name={copied ? 'check' : 'copy'} size={15} />
            </button>
            {isUser && (
              <button type="button" className="icon-button" aria-label="Edit and resend" title="Edit and resend" disabled={busy} onClick={() => setEditing(true)}>
                <Icon name="pencil" size={15} />
              </button>
            )}
            {!isUser && props.isLastReply && (
              <button type="button" className="icon-button" aria-label="Regenerate reply" title="Regenerate" disabled={busy} onClick={props.onRegenerate}>
                <Icon name="refresh" size={15} />
              </button>
            )}
            {props.onBranch !== undefined && (
              <button type="button" className="icon-button" aria-label="Branch from here" title="New conversation from here" disabled={busy} onClick={() => props.onBranch?.(message.id)}>
                <Icon name="branch" size={15} />
              </button>
            )}
            {copied && (
              <span className="copied-note" role="status">
                Copied
              </span>
            )}
          </div>
        )}
      </div>
    </article>
  )
})
