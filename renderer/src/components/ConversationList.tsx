/** @file The sidebar list: conversations grouped by last activity, each with Rename and Delete. */
import { useState, type JSX } from 'react'
import type { ConversationSummary } from '../../../preload/api'
import { dateGroup, type DateGroup } from '../lib/format'
import { Icon } from './icons'
import { TitleField } from './TitleField'

/** Title shown for a conversation without one. */
export const UNTITLED = 'Untitled chat'

interface ListProps {
  readonly conversations: readonly ConversationSummary[]
  readonly selectedId: string | null
  readonly onSelect: (id: string) => void
  readonly onRename: (id: string, title: string) => void
  readonly onDelete: (conversation: ConversationSummary) => void
}

/** Conversations, most recent first, under "Today", "Yesterday", … headings. */
export function ConversationList({ conversations, selectedId, onSelect, onRename, onDelete }: ListProps): JSX.Element {
  const [renamingId, setRenamingId] = useState<string | null>(null)
  const nowMs = Date.now()
  const groups: { name: DateGroup; items: ConversationSummary[] }[] = []
  for (const c of conversations) {
    const name = dateGroup(c.updatedAtMs, nowMs)
    const last = groups.at(-1)
    if (last?.name === name) last.items.push(c)
    else groups.push({ name, items: [c] })
  }
  return (
    <div className="conv-groups">
      {groups.map((group) => (
        <section key={group.name} className="conv-group" aria-label={group.name}>
          <h2 className="conv-group-title">{group.name}</h2>
          <ul className="conv-list">
            {group.items.map((c) => {
              const title = c.title === '' ? UNTITLED : c.title
              const selected = c.id === selectedId
              return (
                <li key={c.id} className={selected ? 'conv-item selected' : 'conv-item'}>
                  {renamingId === c.id ? (
                    <TitleField
                      initial={c.title}
                      label="Conversation title"
                      onDone={(newTitle) => {
                        setRenamingId(null)
                        if (newTitle !== null) onRename(c.id, newTitle)
                      }}
                    />
                  ) : (
                    <button
                      type="button"
                      className="conv-item-main"
                      aria-current={selected ? 'page' : undefined}
                      onClick={() => onSelect(c.id)}
                      title={title}
                    >
                      {title}
                    </button>
                  )}
                  {renamingId !== c.id && (
                    <span className="conv-item-actions">
                      <button type="button" className="icon-button" aria-label={`Rename ${title}`} title="Rename" onClick={() => setRenamingId(c.id)}>
                        <Icon name="pencil" size={15} />
                      </button>
                      <button type="button" className="icon-button" aria-label={`Delete ${title}`} title="Delete" onClick={() => onDelete(c)}>
                        <Icon name="trash" size={15} />
                      </button>
                    </span>
                  )}
                </li>
              )
            })}
          </ul>
        </section>
      ))}
    </div>
  )
}
