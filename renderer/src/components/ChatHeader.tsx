/**
 * @file The chat header: sidebar toggle (narrow windows), the editable title, model picker, chat settings, export
 * (a conversation that exists), and the toggle of the live device activity panel.
 */
import { useState, type JSX } from 'react'
import type { ExportFormat, ModelEntry } from '../../../preload/api'
import { UNTITLED } from '../lib/format'
import { ExportMenu } from './ExportMenu'
import { Icon } from './icons'
import { ModelPicker } from './ModelPicker'
import { TitleField } from './TitleField'
import { USAGE_PANEL_ID } from './UsagePanel'

interface ChatHeaderProps {
  /** null for a new chat that has no title yet */
  readonly title: string | null
  readonly sidebarOpen: boolean
  readonly models: readonly ModelEntry[]
  readonly modelId: string | null
  readonly onToggleSidebar: () => void
  readonly onRename: (title: string) => void
  readonly onModelChange: (modelId: string) => void
  readonly onOpenChatSettings: () => void
  readonly onNewChat: () => void
  /** saves this conversation as a file */
  readonly onExport: (format: ExportFormat) => void
  /** the last reply's "resumed N of M tokens" when a KV snapshot brought its history back, else null */
  readonly resumed: string | null
  /** the live device activity panel is showing */
  readonly activityOpen: boolean
  readonly onToggleActivity: () => void
}

/** Header above the messages. */
export function ChatHeader(props: ChatHeaderProps): JSX.Element {
  const [renaming, setRenaming] = useState(false)
  const title = props.title === null ? 'New chat' : props.title === '' ? UNTITLED : props.title
  return (
    <header className="chat-header">
      <button
        type="button"
        className="icon-button sidebar-toggle"
        aria-label="Show conversations"
        aria-expanded={props.sidebarOpen}
        aria-controls="sidebar"
        onClick={props.onToggleSidebar}
      >
        <Icon name="menu" />
      </button>
      <div className="chat-title">
        {renaming && props.title !== null ? (
          <TitleField
            initial={props.title}
            label="Conversation title"
            onDone={(t) => {
              setRenaming(false)
              if (t !== null) props.onRename(t)
            }}
          />
        ) : (
          <>
            <h1 title={title}>{title}</h1>
            {props.title !== null && (
              <button type="button" className="icon-button" aria-label="Rename conversation" title="Rename" onClick={() => setRenaming(true)}>
                <Icon name="pencil" size={15} />
              </button>
            )}
          </>
        )}
      </div>
      {/* On narrow windows the sidebar (and its New chat button) is folded away. */}
      <button type="button" className="icon-button header-new-chat" aria-label="New chat" title="New chat" onClick={props.onNewChat}>
        <Icon name="plus" />
      </button>
      {props.resumed !== null && (
        <span className="badge" title="The last reply continued from the conversation's saved memory instead of reading its history again">
          Resumed from snapshot: {props.resumed}
        </span>
      )}
      <div className="chat-header-tools">
        <ModelPicker id="header-model" models={props.models} value={props.modelId} onChange={props.onModelChange} />
        <button type="button" className="icon-button" aria-label="Chat settings" title="System prompt and sampling" onClick={props.onOpenChatSettings}>
          <Icon name="sliders" />
        </button>
        {props.title !== null && <ExportMenu onExport={props.onExport} />}
        <button
          type="button"
          className={props.activityOpen ? 'icon-button toggled' : 'icon-button'}
          aria-label="Device activity"
          aria-expanded={props.activityOpen}
          aria-controls={USAGE_PANEL_ID}
          title={props.activityOpen ? 'Hide device activity' : 'Show device activity'}
          onClick={props.onToggleActivity}
        >
          <Icon name="activity" />
        </button>
      </div>
    </header>
  )
}
