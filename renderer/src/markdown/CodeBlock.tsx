/** @file A fenced code block with its language label and a Copy button. */
import { memo, useState, type JSX } from 'react'
import { copyText } from '../lib/clipboard'

/** How long "Copied" shows after a copy (ms). */
const COPIED_FEEDBACK_MS = 1500

/** Renders code as text (never as markup) with a copy button. */
export const CodeBlock = memo(function CodeBlock({ lang, code }: { lang: string; code: string }): JSX.Element {
  const [copied, setCopied] = useState<'idle' | 'copied' | 'failed'>('idle')
  const onCopy = (): void => {
    void copyText(code).then((ok) => {
      setCopied(ok ? 'copied' : 'failed')
      window.setTimeout(() => setCopied('idle'), COPIED_FEEDBACK_MS)
    })
  }
  const label = lang === '' ? 'code' : lang
  return (
    <figure className="code-block">
      <figcaption className="code-block-bar">
        <span className="code-block-lang">{label}</span>
        <button type="button" className="button-ghost button-small" onClick={onCopy} aria-label={`Copy ${label}`}>
          {copied === 'copied' ? 'Copied' : copied === 'failed' ? 'Copy failed' : 'Copy'}
        </button>
      </figcaption>
      <pre>
        <code>{code}</code>
      </pre>
    </figure>
  )
})
