/**
 * @file The app shell: sidebar (conversations, search), the chat pane with the device activity panel, dialogs
 * and toasts, and files dropped on the window to summarize, wired to the Api from `getApi()` (Electron preload
 * or the HTTP client in browser mode).
 */
import { useCallback, useEffect, useMemo, useRef, useState, type JSX } from 'react'
import type { Api, ConversationSummary, ExportFormat, SamplingSettings, SearchHit } from '../../preload/api'
import { getApi } from './api'
import { ChatPane } from './components/ChatPane'
import { ChatSettingsDialog } from './components/ChatSettingsDialog'
import type { ComposerHandle } from './components/Composer'
import { DropOverlay } from './components/DropOverlay'
import { SettingsDialog, type SettingsTab } from './components/SettingsDialog'
import { Sidebar } from './components/Sidebar'
import { ToastRegion } from './components/ToastRegion'
import { UsagePanel } from './components/UsagePanel'
import { describeError, type UiError } from './lib/errors'
import { exportFileName } from './lib/export-files'
import { UNTITLED } from './lib/format'
import { saveExport } from './lib/save-file'
import { ApiContext } from './state/api-context'
import { useChat, type DraftSettings } from './state/use-chat'
import { useActivityPanel } from './state/use-activity-panel'
import { useConversations } from './state/use-conversations'
import { useDevices } from './state/use-devices'
import { useFileDrop } from './state/use-file-drop'
import { useRoute } from './state/use-route'
import { useSearch } from './state/use-search'
import { useSettings } from './state/use-settings'
import { useShortcuts } from './state/use-shortcuts'
import { useTheme } from './state/use-theme'
import { useToasts } from './state/use-toasts'

/** Used only until the app's own defaults have loaded. */
const FALLBACK_SAMPLING: SamplingSettings = { temperature: 0.7, topP: 0.9, maxTokens: 256 }

/** How long a search hit stays highlighted after jumping to it (ms). */
const HIT_HIGHLIGHT_MS = 2500

/** Top-level component: connects to the app, then shows the shell (or why it could not connect). */
export function App(): JSX.Element {
  const [connection] = useState<{ api: Api } | { error: UiError }>(() => {
    try {
      return { api: getApi() }
    } catch (e) {
      return { error: describeError(e) }
    }
  })
  if ('error' in connection) {
    return (
      <main className="fatal" role="alert">
        <h1>Tandem cannot start</h1>
        <p>{connection.error.detail}</p>
        <p>Open Tandem from the app, or from the address `tandem serve` printed (it includes the access token).</p>
      </main>
    )
  }
  return (
    <ApiContext.Provider value={connection.api}>
      <Shell api={connection.api} />
    </ApiContext.Provider>
  )
}

function Shell({ api }: { api: Api }): JSX.Element {
  const settingsState = useSettings()
  const { settings, models } = settingsState
  useTheme(settings?.theme ?? 'system')
  const conversations = useConversations()
  const [selectedId, navigate] = useRoute()
  const [query, setQuery] = useState('')
  const search = useSearch(query)
  const [focusMessageId, setFocusMessageId] = useState<string | null>(null)
  const [sidebarOpen, setSidebarOpen] = useState(false)
  const [dialog, setDialog] = useState<{ kind: 'settings'; tab: SettingsTab } | { kind: 'chat' } | null>(null)
  const devices = useDevices()
  const [activityOpen, setActivityOpen] = useActivityPanel()
  const [version, setVersion] = useState<string | null>(null)
  const toasts = useToasts()
  const searchInput = useRef<HTMLInputElement>(null)
  const composer = useRef<ComposerHandle>(null)

  useEffect(() => {
    api.app.version().then(setVersion, () => setVersion(null))
  }, [api])

  // What the app found (a rebuilt search index, a damaged database file, an unwritable graph cache): each told
  // once, as a toast. Asked at start and after every reply, since opening a model can find the cache unwritable.
  const showNotice = toasts.show
  const noticesShown = useRef(new Set<string>())
  const checkNotices = useCallback(() => {
    api.app.notices().then(
      (notices) =>
        notices.forEach((n) => {
          if (noticesShown.current.has(n.message)) return
          noticesShown.current.add(n.message)
          showNotice(n.message)
        }),
      () => undefined
    )
  }, [api, showNotice])
  useEffect(checkNotices, [checkNotices])

  const defaults: DraftSettings = useMemo(() => {
    const usable = models.filter((m) => m.problem === null)
    const preferred = usable.find((m) => m.id === settings?.defaultModelId) ?? usable[0] ?? null
    return { modelId: preferred?.id ?? null, systemPrompt: '', sampling: settings?.sampling ?? FALLBACK_SAMPLING }
  }, [models, settings])

  const refreshList = conversations.refresh
  const onCreated = useCallback(
    (c: { id: string }) => {
      navigate(c.id)
      void refreshList()
    },
    [navigate, refreshList]
  )
  const onChanged = useCallback(() => {
    void refreshList()
    checkNotices()
  }, [refreshList, checkNotices])
  const onOpen = useCallback(
    (id: string) => {
      navigate(id)
      setFocusMessageId(null)
    },
    [navigate]
  )
  const chat = useChat({ conversationId: selectedId, defaults, onCreated, onOpen, onChanged })
  const { conversation } = chat

  // A model problem (missing, unusable) means the model list is stale: rescan so the picker tells the truth.
  const reloadModels = settingsState.reload
  useEffect(() => {
    if (chat.actionError?.action === 'settings') void reloadModels()
  }, [chat.actionError, reloadModels])

  const modelId = conversation !== null ? (conversation.modelId ?? defaults.modelId) : chat.draft.modelId
  const title = conversation?.title ?? null
  useEffect(() => {
    document.title = title === null || title === '' ? 'Tandem' : `${title} · Tandem`
  }, [title])

  const newChat = useCallback(() => {
    navigate(null)
    setSidebarOpen(false)
    setFocusMessageId(null)
    window.setTimeout(() => composer.current?.focus(), 0)
  }, [navigate])

  const openConversation = useCallback(
    (id: string) => {
      navigate(id)
      setSidebarOpen(false)
      setFocusMessageId(null)
    },
    [navigate]
  )

  const openHit = useCallback(
    (hit: SearchHit) => {
      navigate(hit.conversationId)
      setSidebarOpen(false)
      setFocusMessageId(hit.messageId)
      if (hit.messageId !== null) window.setTimeout(() => setFocusMessageId(null), HIT_HIGHLIGHT_MS)
    },
    [navigate]
  )

  const showError = toasts.show
  const conversationId = conversation?.id ?? null
  const branchFrom = useCallback(
    (messageId: string) => {
      if (conversationId === null) return
      api.conversations.branch(conversationId, messageId).then(
        (c) => {
          onCreated(c)
          setFocusMessageId(null)
        },
        (e: unknown) => showError(`Could not start a branch: ${describeError(e).detail}`)
      )
    },
    [api, conversationId, onCreated, showError]
  )
  const exportConversation = useCallback(
    (format: ExportFormat) => {
      if (conversationId === null) return
      api.conversations.export([conversationId], format).then(
        (text) => saveExport(text, exportFileName(title ?? '', format), format),
        (e: unknown) => showError(`Could not export: ${describeError(e).detail}`)
      )
    },
    [api, conversationId, title, showError]
  )
  const deleteConversation = useCallback(
    (c: ConversationSummary) => {
      const name = c.title === '' ? UNTITLED : c.title
      const wasOpen = c.id === selectedId
      void conversations.remove(c.id).then((failure) => {
        if (failure !== null) {
          showError(`Could not delete “${name}”: ${failure.detail}`)
          return
        }
        if (wasOpen) navigate(null)
        showError(`Deleted “${name}”`, {
          label: 'Undo',
          run: () => {
            void conversations.restore(c.id).then((restoreFailure) => {
              if (restoreFailure !== null) showError(`Could not restore “${name}”: ${restoreFailure.detail}`)
              else if (wasOpen) navigate(c.id)
            })
          }
        })
      })
    },
    [conversations, navigate, selectedId, showError]
  )

  const renameConversation = useCallback(
    (id: string, newTitle: string) => {
      // The conversation on screen (even while it loads) goes through the chat state so its header updates too.
      const rename = id === selectedId ? chat.updateConversation({ title: newTitle }) : conversations.rename(id, newTitle)
      void rename.then((failure) => {
        if (failure !== null) showError(`Could not rename: ${failure.detail}`)
      })
    },
    [conversations, selectedId, chat, showError]
  )

  const changeModel = useCallback(
    (id: string) => {
      void chat.updateConversation({ modelId: id }).then((failure) => {
        if (failure !== null) showError(`Could not switch model: ${failure.detail}`)
      })
      // The last model picked becomes the default for new chats, as in LM Studio and Jan.
      if (settings !== null && settings.defaultModelId !== id) void settingsState.update({ defaultModelId: id })
    },
    [chat, settings, settingsState, showError]
  )

  const { summarize } = chat
  const summarizeFile = useCallback(
    (file: File) => {
      setSidebarOpen(false)
      void summarize(file, true)
    },
    [summarize]
  )
  // One file per summary: the first of several dropped is summarized, and the user is told about the rest.
  const draggingFiles = useFileDrop((files) => {
    const [first, ...rest] = files
    if (first === undefined) return
    summarizeFile(first)
    if (rest.length > 0) {
      const others = rest.length === 1 ? `${rest[0]?.name ?? 'The other file'} was` : `${rest.length} other files were`
      showError(`${others} not summarized: one file is summarized at a time. Drop it again afterwards.`)
    }
  })

  useShortcuts({
    onStop: () => void chat.stop(),
    onNewChat: newChat,
    onSearch: () => {
      setSidebarOpen(true)
      window.setTimeout(() => {
        searchInput.current?.focus()
        searchInput.current?.select()
      }, 0)
    }
  })

  const streamingHere = chat.active !== null && chat.active.conversationId === conversation?.id
  return (
    <div className={sidebarOpen ? 'app sidebar-is-open' : 'app'}>
      <Sidebar
        open={sidebarOpen}
        conversations={conversations.list}
        loading={conversations.loading}
        listError={conversations.error}
        selectedId={selectedId}
        query={query}
        onQueryChange={setQuery}
        searchInput={searchInput}
        hits={search.hits}
        searching={search.searching}
        searchError={search.error}
        version={version}
        onNewChat={newChat}
        onSummarizeFile={summarizeFile}
        onSelect={openConversation}
        onOpenHit={openHit}
        onRename={renameConversation}
        onDelete={deleteConversation}
        onOpenSettings={() => {
          setSidebarOpen(false)
          setDialog({ kind: 'settings', tab: 'general' })
        }}
        onClose={() => setSidebarOpen(false)}
      />
      {sidebarOpen && <div className="sidebar-backdrop" aria-hidden="true" onClick={() => setSidebarOpen(false)} />}
      <ChatPane
        conversation={{ chat, title, modelId, streamingHere, focusMessageId }}
        models={{ list: models, loading: settingsState.loading, error: settingsState.error }}
        panels={{
          sidebarOpen,
          activityOpen,
          activity: activityOpen ? (
            <UsagePanel
              devices={devices.devices}
              devicesLoading={devices.loading}
              generating={chat.active !== null}
              onClose={() => setActivityOpen(false)}
              onOpenDevices={() => setDialog({ kind: 'settings', tab: 'devices' })}
            />
          ) : null
        }}
        actions={{
          onToggleSidebar: () => setSidebarOpen((v) => !v),
          onToggleActivity: () => setActivityOpen(!activityOpen),
          onRename: (t) => conversation !== null && renameConversation(conversation.id, t),
          onModelChange: changeModel,
          onOpenChatSettings: () => setDialog({ kind: 'chat' }),
          onOpenSettings: () => setDialog({ kind: 'settings', tab: 'models' }),
          onNewChat: newChat,
          onBranch: branchFrom,
          onSummarizeAgain: (file) => void summarize(file, false),
          onExport: exportConversation
        }}
        composerRef={composer}
      />
      {dialog?.kind === 'settings' && (
        <SettingsDialog state={settingsState} devices={devices} initialTab={dialog.tab} onConversationsImported={refreshList} onClose={() => setDialog(null)} />
      )}
      {dialog?.kind === 'chat' && (
        <ChatSettingsDialog
          // Edits belong to one conversation: when it arrives (opened right after a reload, before it loaded)
          // the dialog starts over on its values.
          key={conversation?.id ?? 'draft'}
          systemPrompt={conversation?.systemPrompt ?? chat.draft.systemPrompt}
          sampling={conversation?.sampling ?? chat.draft.sampling}
          defaults={settings?.sampling ?? FALLBACK_SAMPLING}
          onSave={chat.updateConversation}
          onClose={() => setDialog(null)}
        />
      )}
      <ToastRegion toasts={toasts.toasts} onDismiss={toasts.dismiss} />
      {draggingFiles && <DropOverlay />}
    </div>
  )
}
