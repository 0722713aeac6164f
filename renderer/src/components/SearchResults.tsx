/** @file Search hits in the sidebar: conversation title and an excerpt with the matching words marked. */
import type { JSX, ReactNode } from 'react'
import type { SearchHit } from '../../../preload/api'
import { UNTITLED } from '../lib/format'

/** Words shorter than this are not highlighted (they match everywhere). */
const MIN_HIGHLIGHT_CHARS = 2

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** The snippet with each query word wrapped in <mark>. */
function highlight(snippet: string, query: string): ReactNode[] {
  const words = query.split(/\s+/).filter((w) => w.length >= MIN_HIGHLIGHT_CHARS).map(escapeRegex)
  if (words.length === 0) return [snippet]
  const parts = snippet.split(new RegExp(`(${words.join('|')})`, 'giu'))
  return parts.map((part, k) => (k % 2 === 1 ? <mark key={k}>{part}</mark> : part))
}

interface SearchResultsProps {
  readonly query: string
  readonly hits: readonly SearchHit[]
  readonly searching: boolean
  readonly onOpen: (hit: SearchHit) => void
}

/** The result list, or what to do when nothing matched. */
export function SearchResults({ query, hits, searching, onOpen }: SearchResultsProps): JSX.Element {
  if (hits.length === 0) {
    return (
      <p className="sidebar-note" role="status">
        {searching ? 'Searching…' : `No conversations match “${query.trim()}”.`}
      </p>
    )
  }
  return (
    <section aria-label="Search results">
      <h2 className="conv-group-title">
        {hits.length} {hits.length === 1 ? 'result' : 'results'}
      </h2>
      <ul className="conv-list search-results">
        {hits.map((hit) => (
          <li key={`${hit.conversationId}:${hit.messageId ?? 'title'}`} className="conv-item">
            <button type="button" className="conv-item-main search-hit" onClick={() => onOpen(hit)}>
              <span className="search-hit-title">{hit.title === '' ? UNTITLED : hit.title}</span>
              {hit.messageId !== null && <span className="search-hit-snippet">{highlight(hit.snippet, query)}</span>}
            </button>
          </li>
        ))}
      </ul>
    </section>
  )
}
