/**
 * @file The message box: Enter sends, Shift+Enter adds a line, Send turns into Stop while a reply streams.
 * The text is cleared when sent and put back if the app did not accept it, so nothing typed is lost.
 */
import { useImperativeHandle, useRef, useState, type JSX, type Ref } from 'react'
import { LIMITS } from '../lib/limits'
import { Icon } from './icons'

/** Show the character count once a message is this close to the limit (fraction of it). */
const COUNTER_FROM_FRACTION = 0.8

/** What App can do to the composer from outside (shortcuts, new chat). */
export interface ComposerHandle {
  focus: () => void
}

interface ComposerProps {
  readonly ref?: Ref<ComposerHandle>
  /** a reply is streaming in this conversation */
  readonly streaming: boolean
  /** a reply is streaming in another conversation */
  readonly busyElsewhere: boolean
  /** resolves false when the message was not saved; the text is then restored */
  readonly onSend: (text: string) => Promise<boolean>
  readonly onStop: () => void
  /** the box's placeholder (default "Message Tandem…") */
  readonly placeholder?: string
}

/** The composer at the bottom of the chat. */
export function Composer({ ref, streaming, busyElsewhere, onSend, onStop, placeholder = 'Message Tandem…' }: ComposerProps): JSX.Element {
  const [text, setText] = useState('')
  const [note, setNote] = useState<string | null>(null)
  const area = useRef<HTMLTextAreaElement>(null)
  useImperativeHandle(ref, () => ({ focus: () => area.current?.focus() }), [])

  const tooLong = text.length > LIMITS.maxMessageChars
  const empty = text.trim() === ''
  const blocked = streaming || busyElsewhere

  const submit = (): void => {
    if (empty) {
      setNote('Type a message first.')
      return
    }
    if (tooLong) {
      setNote(`This message is ${text.length.toLocaleString()} characters; the limit is ${LIMITS.maxMessageChars.toLocaleString()}. Shorten it or send it in parts.`)
      return
    }
    if (blocked) {
      setNote(streaming ? 'Wait for the reply to finish, or press Esc to stop it.' : 'Another chat is still generating. Stop it first.')
      return
    }
    const sent = text
    setText('')
    setNote(null)
    void onSend(sent).then((accepted) => {
      if (accepted) return
      // Put the text back unless the user already started typing something new.
      setText((current) => (current === '' ? sent : current))
      setNote('Your message was not sent; it is back in the box.')
    })
  }

  const showCounter = text.length >= LIMITS.maxMessageChars * COUNTER_FROM_FRACTION
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault()
        submit()
      }}
    >
      <div className={tooLong ? 'composer-box invalid' : 'composer-box'}>
        <label htmlFor="composer-input" className="visually-hidden">
          Message
        </label>
        <textarea
          id="composer-input"
          ref={area}
          rows={1}
          value={text}
          placeholder={placeholder}
          aria-describedby={note !== null ? 'composer-note' : undefined}
          aria-invalid={tooLong || undefined}
          onChange={(e) => {
            setText(e.target.value)
            if (note !== null) setNote(null)
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault()
              submit()
            }
          }}
        />
        {streaming || busyElsewhere ? (
          <button type="button" className="send-button stop" onClick={onStop} aria-label="Stop generating" title="Stop (Esc)">
            <Icon name="stop" />
          </button>
        ) : (
          <button
            type="submit"
            className="send-button"
            aria-label="Send message"
            title="Send (Enter)"
            aria-disabled={empty || tooLong || undefined}
          >
            <Icon name="send" />
          </button>
        )}
      </div>
      <div className="composer-footer">
        {note !== null ? (
          <p id="composer-note" className="composer-note" role="status">
            {note}
          </p>
        ) : (
          <p className="composer-hint">Enter sends · Shift+Enter adds a line · Esc stops a reply</p>
        )}
        {showCounter && (
          <span className={tooLong ? 'char-count over' : 'char-count'}>
            {text.length.toLocaleString()} / {LIMITS.maxMessageChars.toLocaleString()}
          </span>
        )}
      </div>
    </form>
  )
}
