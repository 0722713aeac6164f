/**
 * @file The main pane: header, errors, the messages (or the empty state), and the composer; the device
 * activity panel sits beside them.
 */
import type { JSX, ReactNode, RefObject } from 'react'
import type { ModelEntry } from '../../../preload/api'
import type { UiError } from '../lib/errors'
import type { ChatState } from '../state/use-chat'
import { ChatHeader } from './ChatHeader'
import { Composer, type ComposerHandle } from './Composer'
import { EmptyState } from './EmptyState'
import { ErrorBanner } from './ErrorBanner'
import { MessageList } from './MessageList'

interface ChatPaneProps {
  readonly chat: ChatState
  readonly composerRef: RefObject<ComposerHandle | null>
  readonly models: readonly ModelEntry[]
  readonly modelsLoading: boolean
  readonly modelId: string | null
  readonly title: string | null
  readonly sidebarOpen: boolean
  readonly streamingHere: boolean
  readonly focusMessageId: string | null
  readonly settingsError: UiError | null
  readonly onToggleSidebar: () => void
  readonly onRename: (title: string) => void
  readonly onModelChange: (modelId: string) => void
  readonly onOpenChatSettings: () => void
  readonly onOpenSettings: () => void
  readonly onNewChat: () => void
  readonly activityOpen: boolean
  readonly onToggleActivity: () => void
  /** the device activity panel (beside the messages; above them on narrow windows), or null when closed */
  readonly activity: ReactNode
}

/** The chat column. */
export function ChatPane(props: ChatPaneProps): JSX.Element {
  const { chat, models } = props
  const model = models.find((m) => m.id === props.modelId) ?? null
  const lastMessage = chat.messages.at(-1)
  const canRetry = lastMessage?.role === 'assistant' && chat.active === null
  const showEmpty = chat.conversation === null && chat.messages.length === 0 && !chat.loading && chat.loadError === null
  return (
    <main className="chat-pane" aria-label="Chat">
      <ChatHeader
        title={props.title}
        sidebarOpen={props.sidebarOpen}
        models={models}
        modelId={props.modelId}
        onToggleSidebar={props.onToggleSidebar}
        onRename={props.onRename}
        onModelChange={props.onModelChange}
        onOpenChatSettings={props.onOpenChatSettings}
        onNewChat={props.onNewChat}
        activityOpen={props.activityOpen}
        onToggleActivity={props.onToggleActivity}
      />
      <div className="chat-body">
        <div className="chat-main">
          {chat.loadError !== null ? (
            <div className="empty-state">
              <h2>{chat.loadError.title}</h2>
              <p>{chat.loadError.detail}</p>
              <p className="hint">{chat.loadError.hint}</p>
              <button type="button" className="button-primary" onClick={props.onNewChat}>
                Start a new chat
              </button>
            </div>
          ) : showEmpty ? (
            <EmptyState loading={props.modelsLoading} models={models} model={model} onOpenSettings={props.onOpenSettings} />
          ) : (
            <MessageList
              conversationKey={chat.conversation?.id ?? 'draft'}
              messages={chat.messages}
              busy={chat.active !== null}
              focusMessageId={props.focusMessageId}
              onRegenerate={chat.regenerate}
              onEdit={chat.edit}
            />
          )}
          <div className="chat-bottom">
            {props.settingsError !== null && chat.actionError === null && (
              <ErrorBanner error={props.settingsError} onOpenSettings={props.onOpenSettings} />
            )}
            {chat.actionError !== null && (
              <ErrorBanner
                error={chat.actionError}
                onOpenSettings={props.onOpenSettings}
                onRetry={canRetry ? () => void chat.regenerate() : undefined}
                onDismiss={chat.dismissError}
              />
            )}
            <Composer
              ref={props.composerRef}
              streaming={props.streamingHere}
              busyElsewhere={chat.active !== null && !props.streamingHere}
              onSend={chat.send}
              onStop={() => void chat.stop()}
            />
            <p className="visually-hidden" role="status">
              {props.streamingHere ? 'Generating a reply.' : ''}
            </p>
          </div>
        </div>
        {props.activity}
      </div>
    </main>
  )
}
