/**
 * @file The sidebar list: conversations grouped by last activity, each with Rename and Delete; a branch is listed
 * under the conversation it was started from (indented, however recent it is), while that conversation is listed.
 */
import { useState, type JSX } from 'react'
import type { ConversationSummary } from '../../../preload/api'
import { dateGroup, UNTITLED, type DateGroup } from '../lib/format'
import { Icon } from './icons'
import { TitleField } from './TitleField'

interface ListProps {
  readonly conversations: readonly ConversationSummary[]
  readonly selectedId: string | null
  readonly onSelect: (id: string) => void
  readonly onRename: (id: string, title: string) => void
  readonly onDelete: (conversation: ConversationSummary) => void
}

/** A conversation with its depth under the conversation it branched from (0: top level). */
interface ListedConversation {
  readonly conversation: ConversationSummary
  readonly depth: number
  readonly parentTitle: string | null
}

/** Top-level conversations in list order, each followed by its branches (recursively, in list order). */
function withBranches(conversations: readonly ConversationSummary[]): ListedConversation[] {
  const listed = new Set(conversations.map((c) => c.id))
  const children = new Map<string, ConversationSummary[]>()
  for (const c of conversations) {
    if (c.parentId === null || !listed.has(c.parentId)) continue
    const siblings = children.get(c.parentId) ?? []
    siblings.push(c)
    children.set(c.parentId, siblings)
  }
  const out: ListedConversation[] = []
  const visit = (c: ConversationSummary, depth: number, parentTitle: string | null): void => {
    out.push({ conversation: c, depth, parentTitle })
    for (const child of children.get(c.id) ?? []) visit(child, depth + 1, c.title === '' ? UNTITLED : c.title)
  }
  for (const c of conversations) if (c.parentId === null || !listed.has(c.parentId)) visit(c, 0, null)
  return out
}

/** Deepest indentation shown (classes branch-depth-1..3 in layout.css); deeper branches line up with it. */
const MAX_INDENT = 3

/** Conversations, most recent first, under "Today", "Yesterday", … headings. */
export function ConversationList({ conversations, selectedId, onSelect, onRename, onDelete }: ListProps): JSX.Element {
  const [renamingId, setRenamingId] = useState<string | null>(null)
  const nowMs = Date.now()
  const groups: { name: DateGroup; items: ListedConversation[] }[] = []
  for (const item of withBranches(conversations)) {
    const last = groups.at(-1)
    // a branch stays with its parent's group
    if (item.depth > 0 && last !== undefined) last.items.push(item)
    else {
      const name = dateGroup(item.conversation.updatedAtMs, nowMs)
      if (last?.name === name) last.items.push(item)
      else groups.push({ name, items: [item] })
    }
  }
  return (
    <div className="conv-groups">
      {groups.map((group) => (
        <section key={group.name} className="conv-group" aria-label={group.name}>
          <h2 className="conv-group-title">{group.name}</h2>
          <ul className="conv-list">
            {group.items.map(({ conversation: c, depth, parentTitle }) => {
              const title = c.title === '' ? UNTITLED : c.title
              const selected = c.id === selectedId
              const classes = ['conv-item', ...(selected ? ['selected'] : []), ...(depth > 0 ? ['branch', `branch-depth-${Math.min(depth, MAX_INDENT)}`] : [])].join(' ')
              return (
                <li
                  key={c.id}
                  className={classes}
                  data-branch-of={c.parentId ?? undefined}
                >
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
                      title={parentTitle === null ? title : `${title} — branch of “${parentTitle}”`}
                    >
                      {depth > 0 && (
                        <span className="conv-branch-mark">
                          <Icon name="branch" size={13} />
                          <span className="visually-hidden">Branch: </span>
                        </span>
                      )}
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
