/**
 * @file The main pane: header, errors, the messages (or the empty state), and the composer; the device
 * activity panel sits beside them.
 */
import type { JSX, ReactNode, RefObject } from 'react'
import type { ExportFormat, ModelEntry } from '../../../preload/api'
import type { UiError } from '../lib/errors'
import { formatResumed } from '../lib/format'
import type { ChatState } from '../state/use-chat'
import { ChatHeader } from './ChatHeader'
import { Composer, type ComposerHandle } from './Composer'
import { DocumentCard } from './DocumentCard'
import { EmptyState } from './EmptyState'
import { ErrorBanner } from './ErrorBanner'
import { MessageList } from './MessageList'
import { ReusedSummaryNotice, SummaryProgress } from './SummaryStatus'

/** The conversation on screen and how it is being shown. */
export interface ChatPaneConversation {
  readonly chat: ChatState
  readonly title: string | null
  /** the model this chat uses (the conversation's, or the draft's) */
  readonly modelId: string | null
  /** a reply to this conversation is being generated in this window */
  readonly streamingHere: boolean
  /** the message to scroll to and highlight (a search hit), or null */
  readonly focusMessageId: string | null
}

/** The models to pick from; they come with the settings, so their load state is the settings'. */
export interface ChatPaneModels {
  readonly list: readonly ModelEntry[]
  readonly loading: boolean
  /** the settings (and so the model list) could not be loaded */
  readonly error: UiError | null
}

/** What is open around the chat column. */
export interface ChatPanePanels {
  readonly sidebarOpen: boolean
  readonly activityOpen: boolean
  /** the device activity panel (beside the messages; above them on narrow windows), or null when closed */
  readonly activity: ReactNode
}

/** What the pane asks the shell to do. */
export interface ChatPaneActions {
  readonly onToggleSidebar: () => void
  readonly onToggleActivity: () => void
  readonly onRename: (title: string) => void
  readonly onModelChange: (modelId: string) => void
  readonly onOpenChatSettings: () => void
  /** opens Settings → Models: the pane sends the user to Settings only for model problems (none found, one unusable) */
  readonly onOpenSettings: () => void
  readonly onNewChat: () => void
  /** starts a new conversation from a message of this one */
  readonly onBranch: (messageId: string) => void
  /** summarizes a file again, not taking the stored summary */
  readonly onSummarizeAgain: (file: File) => void
  /** saves the conversation on screen as a file */
  readonly onExport: (format: ExportFormat) => void
}

interface ChatPaneProps {
  readonly conversation: ChatPaneConversation
  readonly models: ChatPaneModels
  readonly panels: ChatPanePanels
  readonly actions: ChatPaneActions
  /** lets the shell focus the composer (New chat) */
  readonly composerRef: RefObject<ComposerHandle | null>
}

/** The chat column. */
export function ChatPane({ conversation, models, panels, actions, composerRef }: ChatPaneProps): JSX.Element {
  const { chat, modelId, streamingHere } = conversation
  const model = models.list.find((m) => m.id === modelId) ?? null
  const lastMessage = chat.messages.at(-1)
  const canRetry = lastMessage?.role === 'assistant' && chat.active === null
  const showEmpty = chat.conversation === null && chat.messages.length === 0 && !chat.loading && chat.loadError === null
  // a summary shows its progress here, and before its conversation exists wherever the user is
  const summary = chat.active?.summary ?? null
  const summaryHere = summary !== null && (chat.active?.conversationId === null || streamingHere)
  const reused = chat.reused !== null && chat.reused.conversationId === chat.conversation?.id ? chat.reused : null
  const document = chat.document
  return (
    <main className="chat-pane" aria-label="Chat">
      <ChatHeader
        title={conversation.title}
        sidebarOpen={panels.sidebarOpen}
        models={models.list}
        modelId={modelId}
        onToggleSidebar={actions.onToggleSidebar}
        onRename={actions.onRename}
        onModelChange={actions.onModelChange}
        onOpenChatSettings={actions.onOpenChatSettings}
        onNewChat={actions.onNewChat}
        onExport={actions.onExport}
        resumed={lastMessage?.role === 'assistant' && lastMessage.stats !== null ? formatResumed(lastMessage.stats) : null}
        activityOpen={panels.activityOpen}
        onToggleActivity={actions.onToggleActivity}
      />
      <div className="chat-body">
        <div className="chat-main">
          {chat.loadError !== null ? (
            <div className="empty-state">
              <h2>{chat.loadError.title}</h2>
              <p>{chat.loadError.detail}</p>
              <p className="hint">{chat.loadError.hint}</p>
              <button type="button" className="button-primary" onClick={actions.onNewChat}>
                Start a new chat
              </button>
            </div>
          ) : showEmpty ? (
            <EmptyState loading={models.loading} models={models.list} model={model} onOpenSettings={actions.onOpenSettings} />
          ) : (
            <MessageList
              conversationKey={chat.conversation?.id ?? 'draft'}
              messages={chat.messages}
              busy={chat.active !== null}
              loadProgress={streamingHere ? (chat.active?.loadProgress ?? null) : null}
              focusMessageId={conversation.focusMessageId}
              onRegenerate={chat.regenerate}
              onEdit={chat.edit}
              onBranch={chat.conversation !== null ? actions.onBranch : undefined}
              header={document !== null ? <DocumentCard document={document} /> : undefined}
            />
          )}
          <div className="chat-bottom">
            {summaryHere && <SummaryProgress run={summary} onCancel={() => void chat.stop()} />}
            {reused !== null && !summaryHere && (
              <ReusedSummaryNotice fileName={reused.file.name} onSummarizeAgain={() => actions.onSummarizeAgain(reused.file)} onDismiss={chat.dismissReused} />
            )}
            {models.error !== null && chat.actionError === null && (
              <ErrorBanner error={models.error} onOpenSettings={actions.onOpenSettings} />
            )}
            {chat.actionError !== null && (
              <ErrorBanner
                error={chat.actionError}
                onOpenSettings={actions.onOpenSettings}
                onRetry={canRetry ? () => void chat.regenerate() : undefined}
                onDismiss={chat.dismissError}
              />
            )}
            <Composer
              ref={composerRef}
              streaming={streamingHere}
              busyElsewhere={chat.active !== null && !streamingHere}
              onSend={chat.send}
              onStop={() => void chat.stop()}
              placeholder={document !== null ? `Ask about ${document.name}…` : undefined}
            />
            <p className="visually-hidden" role="status">
              {summaryHere ? `Summarizing ${summary.fileName}.` : streamingHere ? 'Generating a reply.' : ''}
            </p>
          </div>
        </div>
        {panels.activity}
      </div>
    </main>
  )
}
