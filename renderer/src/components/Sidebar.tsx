/** @file The sidebar: New chat, Summarize a file…, search (titles and content), the conversation list, and Settings. */
import type { JSX, RefObject } from 'react'
import type { ConversationSummary, SearchHit } from '../../../preload/api'
import { errorText, type UiError } from '../lib/errors'
import { LIMITS } from '../lib/limits'
import { MOD_KEY_LABEL as MOD_KEY } from '../lib/platform'
import { ConversationList } from './ConversationList'
import { Icon } from './icons'
import { SearchResults } from './SearchResults'
import { SummarizeFileButton } from './SummarizeFileButton'

interface SidebarProps {
  readonly open: boolean
  readonly conversations: readonly ConversationSummary[]
  readonly loading: boolean
  readonly listError: UiError | null
  readonly selectedId: string | null
  readonly query: string
  readonly onQueryChange: (query: string) => void
  readonly searchInput: RefObject<HTMLInputElement | null>
  readonly hits: readonly SearchHit[]
  readonly searching: boolean
  readonly searchError: UiError | null
  readonly version: string | null
  readonly onNewChat: () => void
  /** a file was picked to summarize */
  readonly onSummarizeFile: (file: File) => void
  readonly onSelect: (id: string) => void
  readonly onOpenHit: (hit: SearchHit) => void
  readonly onRename: (id: string, title: string) => void
  readonly onDelete: (conversation: ConversationSummary) => void
  readonly onOpenSettings: () => void
  readonly onClose: () => void
}

/** The left column; on narrow windows an overlay opened from the header. */
export function Sidebar(props: SidebarProps): JSX.Element {
  const { query, hits, searching } = props
  const searchingNow = query.trim() !== ''
  return (
    <aside id="sidebar" className={props.open ? 'sidebar open' : 'sidebar'} aria-label="Conversations">
      <div className="sidebar-top">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true">
            T
          </span>
          <span className="brand-name">Tandem</span>
          <button type="button" className="icon-button sidebar-close" aria-label="Close conversations" onClick={props.onClose}>
            <Icon name="close" />
          </button>
        </div>
        <button type="button" className="button-primary new-chat" onClick={props.onNewChat} title={`New chat (${MOD_KEY}N)`}>
          <Icon name="plus" /> New chat
        </button>
        <SummarizeFileButton onFile={props.onSummarizeFile} />
        <div className="search-box">
          <Icon name="search" size={16} />
          <input
            ref={props.searchInput}
            type="search"
            aria-label="Search conversations"
            placeholder={`Search (${MOD_KEY}K)`}
            value={query}
            maxLength={LIMITS.maxSearchChars}
            onChange={(e) => props.onQueryChange(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape' && query !== '') {
                e.preventDefault()
                e.stopPropagation()
                props.onQueryChange('')
              }
            }}
          />
        </div>
      </div>
      <nav className="sidebar-scroll" aria-label={searchingNow ? 'Search results' : 'Conversation list'}>
        {searchingNow ? (
          props.searchError !== null ? (
            <p className="sidebar-note" role="alert">
              Search failed: {props.searchError.detail}
            </p>
          ) : (
            <SearchResults query={query} hits={hits} searching={searching} onOpen={props.onOpenHit} />
          )
        ) : props.listError !== null ? (
          <p className="sidebar-note" role="alert">
            Could not load conversations. {errorText(props.listError)}
          </p>
        ) : props.conversations.length === 0 ? (
          <p className="sidebar-note">{props.loading ? 'Loading…' : 'No conversations yet. Start one with New chat.'}</p>
        ) : (
          <ConversationList
            conversations={props.conversations}
            selectedId={props.selectedId}
            onSelect={props.onSelect}
            onRename={props.onRename}
            onDelete={props.onDelete}
          />
        )}
      </nav>
      <div className="sidebar-bottom">
        <button type="button" className="button-ghost settings-button" onClick={props.onOpenSettings}>
          <Icon name="settings" /> Settings
        </button>
        {props.version !== null && <span className="version">v{props.version}</span>}
      </div>
    </aside>
  )
}
