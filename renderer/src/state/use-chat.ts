/**
 * @file The open conversation: its messages (and the file it summarizes), and send / regenerate / edit /
 * summarize / stop with streamed replies. A new chat is a local draft until its first message, so "New chat"
 * never leaves empty conversations behind. A summary (issue #15) runs through the same stream as a reply: its
 * conversation arrives with its first event ('created'), and its map-reduce steps are reported as progress.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import type { Conversation, ConversationPatch, DocumentInfo, Message, SummaryEvent, SummaryOutcome } from '../../../preload/api'
import { fileToBase64 } from '../lib/base64'
import { fileSizeProblem, summarizeRequestText } from '../lib/documents'
import { describeError, errorParts, type UiError } from '../lib/errors'
import { titleFromMessage } from '../lib/format'
import { newRequestId } from '../lib/ids'
import { useApi } from './api-context'
import type { ActiveStream, ChatState, DraftSettings, ReusedSummary, SummaryRun } from './chat-state'
import { useDeltaBatch } from './delta-batch'
import { useLoad } from './use-load'

export type { ActiveStream, ChatState, DraftSettings, ReusedSummary, SummaryRun } from './chat-state'

/** How often a reply streaming elsewhere is re-read (ms). */
const ORPHAN_POLL_MS = 1000

/** Ids of the placeholders shown until the app confirms a request. */
export const PENDING_USER_ID = 'pending-user'
export const PENDING_ASSISTANT_ID = 'pending-assistant'

function placeholder(id: string, role: 'user' | 'assistant', conversationId: string, seq: number, content: string): Message {
  const now = Date.now()
  return { id, conversationId, seq, role, content, status: role === 'user' ? 'complete' : 'streaming', error: null, createdAtMs: now, updatedAtMs: now, stats: null }
}

/** What a streamed request starts from. */
interface RunStart {
  /** the conversation; null for a summary, whose conversation the app creates ('created') */
  readonly conv: Conversation | null
  /** the messages kept above the new ones */
  readonly base: readonly Message[]
  /** the user's message shown until the app confirms it (null: none, a regenerate) */
  readonly userText: string | null
  /** the file, for a summary */
  readonly summary: SummaryRun | null
}

interface ChatOptions {
  /** the conversation to show; null for a new chat */
  readonly conversationId: string | null
  /** settings a new chat starts with */
  readonly defaults: DraftSettings
  /** a draft became a saved conversation, or the app created one (a summary) */
  readonly onCreated: (conversation: Conversation) => void
  /** show a conversation that already existed (the stored summary of a file) */
  readonly onOpen: (conversationId: string) => void
  /** something the sidebar shows changed (title, order) */
  readonly onChanged: () => void
}

/** State and actions for the conversation being viewed. */
export function useChat({ conversationId, defaults, onCreated, onOpen, onChanged }: ChatOptions): ChatState {
  const api = useApi()
  const [conversation, setConversation] = useState<Conversation | null>(null)
  const [messages, setMessages] = useState<readonly Message[]>([])
  const [summarized, setSummarized] = useState<DocumentInfo | null>(null)
  const [reused, setReused] = useState<ReusedSummary | null>(null)
  // A draft stores only what the user changed, so defaults that load later still apply to the rest.
  const [draftOverrides, setDraftOverrides] = useState<Partial<DraftSettings>>({})
  const draft: DraftSettings = useMemo(() => ({ ...defaults, ...draftOverrides }), [defaults, draftOverrides])
  // Every change of view resets the load, so an answer for a conversation no longer on screen is dropped.
  const { loading, error: loadError, run: runLoad, reset: resetLoad } = useLoad()
  const { queue: queueDelta, flush } = useDeltaBatch(setMessages)
  const [active, setActive] = useState<ActiveStream | null>(null)
  const [actionError, setActionError] = useState<UiError | null>(null)

  // Refs mirror what async callbacks must read at the time they run, not when they were created.
  const viewRef = useRef<string | null>(conversationId)
  const conversationRef = useRef<Conversation | null>(null)
  const messagesRef = useRef<readonly Message[]>([])
  const activeRef = useRef<ActiveStream | null>(null)
  // The request the user asked to stop, and one whose stop the app did not confirm (not running yet: a summary's
  // file still on its way), stopped again at its next event.
  const stopAsked = useRef<string | null>(null)
  const unconfirmedStop = useRef<string | null>(null)
  const documentRef = useRef<DocumentInfo | null>(null)
  conversationRef.current = conversation
  messagesRef.current = messages
  documentRef.current = summarized

  /** Sets the running stream, or changes it with `update` (which returns its argument when nothing changes). */
  const setActiveStream = (next: ActiveStream | null | ((s: ActiveStream | null) => ActiveStream | null)): void => {
    const stream = typeof next === 'function' ? next(activeRef.current) : next
    if (stream === activeRef.current) return
    activeRef.current = stream
    setActive(stream)
  }

  /** Re-reads the conversation from the app (the source of truth after every action). */
  const reload = useCallback(
    async (id: string) => {
      // Only the conversation on screen is read: starting a load drops the one in flight, which may be the
      // one the screen waits for.
      if (viewRef.current !== id) return
      await runLoad(
        () => api.conversations.get(id),
        (detail) => {
          setConversation(detail.conversation)
          setMessages(detail.messages)
          setSummarized(detail.document)
        }
      )
    },
    [api, runLoad]
  )

  useEffect(() => {
    viewRef.current = conversationId
    setActionError(null)
    if (conversationId === null) {
      resetLoad(false)
      setConversation(null)
      setMessages([])
      setSummarized(null)
      setDraftOverrides({})
      return
    }
    // A draft that just became this conversation is already on screen (and may be streaming); the view did
    // not change (send set it), so nothing in flight needs dropping.
    if (conversationRef.current?.id === conversationId) return
    resetLoad(true)
    setMessages([])
    setSummarized(null)
    setConversation(null)
    void reload(conversationId)
  }, [conversationId, reload, resetLoad])

  /** Asks the app to stop a request; one it does not know yet (a summary's file on its way) is asked again at its next event. */
  const stopRequest = useCallback(
    async (requestId: string) => {
      try {
        const stopped = await api.chat.stop(requestId)
        if (!stopped && activeRef.current?.requestId === requestId) unconfirmedStop.current = requestId
      } catch (e) {
        setActionError(describeError(e))
      }
    },
    [api]
  )

  /** Makes a conversation just created the one on screen, without reading it again (it is about to stream). */
  const adopt = useCallback(
    (conv: Conversation, document: DocumentInfo | null) => {
      resetLoad(false)
      conversationRef.current = conv
      setConversation(conv)
      setSummarized(document)
      viewRef.current = conv.id
      onCreated(conv)
    },
    [onCreated, resetLoad]
  )

  /**
   * Runs one streamed request: shows `start.base` plus placeholders at once (a summary: once its conversation is
   * 'created'), swaps in the real messages on 'started', appends deltas, tracks a summary's progress, and finally
   * re-reads the conversation. `call` resolves null when it never sent the request (stopped first). Resolves true
   * when the app accepted it.
   */
  const run = useCallback(
    async (start: RunStart, call: (requestId: string, onEvent: (event: SummaryEvent) => void) => Promise<Message | null>): Promise<boolean> => {
      const requestId = newRequestId()
      let conv = start.conv
      const here = (): boolean => conv !== null && viewRef.current === conv.id
      const showPending = (c: Conversation): void => {
        const nextSeq = (start.base.at(-1)?.seq ?? -1) + 1
        const shown = [...start.base]
        if (start.userText !== null) shown.push(placeholder(PENDING_USER_ID, 'user', c.id, nextSeq, start.userText))
        shown.push(placeholder(PENDING_ASSISTANT_ID, 'assistant', c.id, nextSeq + 1, ''))
        setMessages(shown)
      }
      const update = (change: (s: ActiveStream) => ActiveStream): void => setActiveStream((s) => (s === null || s.requestId !== requestId ? s : change(s)))
      if (conv !== null) showPending(conv)
      setActionError(null)
      setActiveStream({ requestId, conversationId: conv?.id ?? null, assistantMessageId: null, loadProgress: null, summary: start.summary })
      let started = false
      const onEvent = (event: SummaryEvent): void => {
        if (unconfirmedStop.current === requestId) {
          unconfirmedStop.current = null
          void stopRequest(requestId)
        }
        if (event.type === 'created') {
          const created = event.conversation
          conv = created
          adopt(created, event.document)
          update((s) => ({ ...s, conversationId: created.id, summary: s.summary === null ? null : { ...s.summary, phase: 'summarizing' } }))
          showPending(created)
        } else if (event.type === 'started') {
          started = true
          update((s) => ({ ...s, assistantMessageId: event.assistantMessage.id, loadProgress: null }))
          if (!here()) return
          flush()
          const fresh = event.userMessage === null ? [event.assistantMessage] : [event.userMessage, event.assistantMessage]
          setMessages([...start.base, ...fresh])
        } else if (event.type === 'loading') {
          update((s) => ({ ...s, loadProgress: event.progress }))
        } else if (event.type === 'progress') {
          // a finished step means the model is open (a summary's text arrives only with its last step); a
          // regenerated summary reports progress too, under the conversation's file
          const fileName = documentRef.current?.name ?? 'the file'
          update((s) => ({
            ...s,
            loadProgress: event.done > 0 ? null : s.loadProgress,
            summary: { fileName, ...s.summary, phase: 'summarizing', done: event.done, total: event.total, etaMs: event.etaMs }
          }))
        } else {
          // the first text ends the model's loading (the same object after that, so no re-render per token)
          setActiveStream((s) => (s === null || s.loadProgress === null ? s : { ...s, loadProgress: null }))
          if (here()) queueDelta(event.messageId, event.text)
        }
      }
      try {
        const final = await call(requestId, onEvent)
        started = true
        flush()
        if (final !== null && here()) setMessages((list) => list.map((m) => (m.id === final.id ? final : m)))
      } catch (e) {
        flush()
        // stopped on request before anything was written (a summary's file still being read): nothing to report
        const stoppedAsAsked = stopAsked.current === requestId && errorParts(e).name === 'StoppedError'
        // a summary that failed before its conversation existed is about the file just picked: told wherever the user is
        if (!stoppedAsAsked && (conv === null || here())) setActionError(describeError(e))
      } finally {
        setActiveStream(null)
        if (unconfirmedStop.current === requestId) unconfirmedStop.current = null
        onChanged()
      }
      if (conv !== null && here()) await reload(conv.id)
      if (!started && start.userText !== null && conv !== null) {
        // The request failed before 'started': keep the text unless the app saved the message anyway.
        const last = messagesRef.current.filter((m) => m.role === 'user').at(-1)
        started = last !== undefined && last.id !== PENDING_USER_ID && last.content === start.userText
      }
      return started
    },
    [adopt, flush, queueDelta, onChanged, reload, stopRequest]
  )

  const send = useCallback(
    async (content: string): Promise<boolean> => {
      if (activeRef.current !== null) return false
      let conv = conversationRef.current
      if (conv === null) {
        try {
          conv = await api.conversations.create({ title: titleFromMessage(content), ...draft })
        } catch (e) {
          setActionError(describeError(e))
          return false
        }
        adopt(conv, null)
      }
      const target = conv
      return run({ conv: target, base: messagesRef.current, userText: content, summary: null }, (requestId, onEvent) =>
        api.chat.send({ requestId, conversationId: target.id, content }, onEvent)
      )
    },
    [api, draft, adopt, run]
  )

  const regenerate = useCallback(async () => {
    const conv = conversationRef.current
    if (conv === null || activeRef.current !== null) return
    const list = messagesRef.current
    const lastUser = list.findLastIndex((m) => m.role === 'user')
    if (lastUser < 0) return
    await run({ conv, base: list.slice(0, lastUser + 1), userText: null, summary: null }, (requestId, onEvent) =>
      api.chat.regenerate({ requestId, conversationId: conv.id }, onEvent)
    )
  }, [api, run])

  const edit = useCallback(
    async (messageId: string, content: string) => {
      const conv = conversationRef.current
      if (conv === null || activeRef.current !== null) return
      const list = messagesRef.current
      const index = list.findIndex((m) => m.id === messageId)
      if (index < 0) return
      await run({ conv, base: list.slice(0, index), userText: content, summary: null }, (requestId, onEvent) =>
        api.chat.edit({ requestId, conversationId: conv.id, messageId, content }, onEvent)
      )
    },
    [api, run]
  )

  const summarize = useCallback(
    async (file: File, reuse: boolean) => {
      if (activeRef.current !== null) {
        setActionError({
          title: 'Still answering',
          detail: `${file.name} was not summarized: a reply is still being written.`,
          hint: 'Wait for it to finish, or stop it (Esc), then try again.',
          action: 'none'
        })
        return
      }
      // refused before a byte is read: a 1 GB file costs nothing
      const tooLarge = fileSizeProblem(file.name, file.size)
      if (tooLarge !== null) {
        setActionError(describeError({ name: 'PayloadTooLargeError', message: tooLarge }))
        return
      }
      setReused(null)
      const result: { outcome: SummaryOutcome | null } = { outcome: null }
      const summary: SummaryRun = { fileName: file.name, phase: 'reading', done: 0, total: 0, etaMs: null }
      await run({ conv: null, base: [], userText: summarizeRequestText(file.name), summary }, async (requestId, onEvent) => {
        const data = await fileToBase64(file)
        if (stopAsked.current === requestId) return null
        result.outcome = await api.summaries.start({ requestId, fileName: file.name, data, reuse }, onEvent)
        return result.outcome.message
      })
      const outcome = result.outcome
      if (outcome?.reused === true) {
        setReused({ conversationId: outcome.conversationId, file })
        onOpen(outcome.conversationId)
      }
    },
    [api, run, onOpen]
  )

  const stop = useCallback(async () => {
    const stream = activeRef.current
    if (stream === null) return
    stopAsked.current = stream.requestId
    await stopRequest(stream.requestId)
  }, [stopRequest])

  const updateConversation = useCallback(
    async (patch: ConversationPatch): Promise<UiError | null> => {
      // the conversation on screen, even while its details are still loading; none: the draft of a new chat
      const id = viewRef.current
      if (id === null) {
        setDraftOverrides((d) => ({
          ...d,
          ...(patch.modelId !== undefined ? { modelId: patch.modelId } : {}),
          ...(patch.systemPrompt !== undefined ? { systemPrompt: patch.systemPrompt } : {}),
          ...(patch.sampling !== undefined ? { sampling: patch.sampling } : {})
        }))
        return null
      }
      try {
        const updated = await api.conversations.update(id, patch)
        if (viewRef.current === updated.id) {
          // details still loading were read before this update: read them again, superseding that answer
          if (conversationRef.current?.id !== updated.id) void reload(updated.id)
          else setConversation(updated)
        }
        onChanged()
        return null
      } catch (e) {
        return describeError(e)
      }
    },
    [api, onChanged, reload]
  )

  // A reply streaming from another window or tab (or from before a reload) is not ours to receive: poll the
  // stored text until it finishes.
  const orphanStreaming = active === null && messages.some((m) => m.status === 'streaming' && !m.id.startsWith('pending-'))
  useEffect(() => {
    const id = conversation?.id
    if (!orphanStreaming || id === undefined) return
    const timer = window.setTimeout(() => void reload(id), ORPHAN_POLL_MS)
    return () => window.clearTimeout(timer)
  }, [orphanStreaming, conversation?.id, messages, reload])

  const dismissError = useCallback(() => setActionError(null), [])
  const dismissReused = useCallback(() => setReused(null), [])

  return {
    conversation,
    messages,
    document: summarized,
    draft,
    loading,
    loadError,
    active,
    actionError,
    dismissError,
    send,
    regenerate,
    edit,
    summarize,
    reused,
    dismissReused,
    stop,
    updateConversation
  }
}
