/** @file The file a conversation summarizes, above its messages: name, type and size, so follow-up questions have a subject. */
import type { JSX } from 'react'
import type { DocumentInfo } from '../../../preload/api'
import { DOCUMENT_TYPE_LABELS } from '../lib/documents'
import { formatBytes } from '../lib/format'
import { Icon } from './icons'

/** A small card; a named region, so it is found (and read) as "Summarized file". */
export function DocumentCard({ document }: { readonly document: DocumentInfo }): JSX.Element {
  return (
    <section className="document-card" aria-label="Summarized file">
      <span className="document-card-icon">
        <Icon name="file" size={20} />
      </span>
      <div className="document-card-text">
        <strong className="document-card-name" title={document.name}>
          {document.name}
        </strong>
        <span className="document-card-meta">
          {DOCUMENT_TYPE_LABELS[document.type]} · {formatBytes(document.bytes)} · {document.textChars.toLocaleString('en-US')} characters of text
        </span>
        <span className="document-card-hint">Questions in this chat are answered from this file.</span>
      </div>
    </section>
  )
}
