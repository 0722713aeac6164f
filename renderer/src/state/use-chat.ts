/**
 * @file The open conversation: its messages, and send / regenerate / edit / stop with streamed replies.
 * A new chat is a local draft until its first message, so "New chat" never leaves empty conversations behind.
 * Deltas are batched per animation frame: a small model can produce hundreds of tokens per second, and
 * re-rendering per token would cost more than generating it.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import type { ChatEvent, Conversation, ConversationPatch, Message, ModelLoadProgress, SamplingSettings } from '../../../preload/api'
import { describeError, type UiError } from '../lib/errors'
import { titleFromMessage } from '../lib/format'
import { newRequestId } from '../lib/ids'
import { useApi } from './api-context'
import { useLoad } from './use-load'

/** Settings of a chat that does not exist yet. */
export interface DraftSettings {
  readonly modelId: string | null
  readonly systemPrompt: string
  readonly sampling: SamplingSettings
}

/** The running generation (at most one at a time, in any conversation). */
export interface ActiveStream {
  readonly requestId: string
  readonly conversationId: string
  /** set once the app confirmed the request ('started') */
  readonly assistantMessageId: string | null
  /** what opening the model is doing, until the reply's first text (null: the model was open, or text arrived) */
  readonly loadProgress: ModelLoadProgress | null
}

/** What the chat hook exposes. */
export interface ChatState {
  /** null while the view is a new, unsaved chat */
  readonly conversation: Conversation | null
  readonly messages: readonly Message[]
  readonly draft: DraftSettings
  readonly loading: boolean
  readonly loadError: UiError | null
  readonly active: ActiveStream | null
  /** the last failed action, shown as a banner until dismissed */
  readonly actionError: UiError | null
  readonly dismissError: () => void
  /** resolves false when the message was not saved (the composer then keeps the text) */
  readonly send: (content: string) => Promise<boolean>
  readonly regenerate: () => Promise<void>
  readonly edit: (messageId: string, content: string) => Promise<void>
  readonly stop: () => Promise<void>
  readonly updateConversation: (patch: ConversationPatch) => Promise<UiError | null>
}

/** How often a reply streaming elsewhere is re-read (ms). */
const ORPHAN_POLL_MS = 1000

/** Ids of the placeholders shown until the app confirms a request. */
export const PENDING_USER_ID = 'pending-user'
export const PENDING_ASSISTANT_ID = 'pending-assistant'

function placeholder(id: string, role: 'user' | 'assistant', conversationId: string, seq: number, content: string): Message {
  const now = Date.now()
  return { id, conversationId, seq, role, content, status: role === 'user' ? 'complete' : 'streaming', error: null, createdAtMs: now, updatedAtMs: now, stats: null }
}

interface ChatOptions {
  /** the conversation to show; null for a new chat */
  readonly conversationId: string | null
  /** settings a new chat starts with */
  readonly defaults: DraftSettings
  /** a draft became a saved conversation */
  readonly onCreated: (conversation: Conversation) => void
  /** something the sidebar shows changed (title, order) */
  readonly onChanged: () => void
}

/** State and actions for the conversation being viewed. */
export function useChat({ conversationId, defaults, onCreated, onChanged }: ChatOptions): ChatState {
  const api = useApi()
  const [conversation, setConversation] = useState<Conversation | null>(null)
  const [messages, setMessages] = useState<readonly Message[]>([])
  // A draft stores only what the user changed, so defaults that load later still apply to the rest.
  const [draftOverrides, setDraftOverrides] = useState<Partial<DraftSettings>>({})
  const draft: DraftSettings = useMemo(() => ({ ...defaults, ...draftOverrides }), [defaults, draftOverrides])
  // Every change of view resets the load, so an answer for a conversation no longer on screen is dropped.
  const { loading, error: loadError, run: runLoad, reset: resetLoad } = useLoad()
  const [active, setActive] = useState<ActiveStream | null>(null)
  const [actionError, setActionError] = useState<UiError | null>(null)

  // Refs mirror what async callbacks must read at the time they run, not when they were created.
  const viewRef = useRef<string | null>(conversationId)
  const conversationRef = useRef<Conversation | null>(null)
  const messagesRef = useRef<readonly Message[]>([])
  const activeRef = useRef<ActiveStream | null>(null)
  const pendingDeltas = useRef(new Map<string, string>())
  const flushHandle = useRef<number | null>(null)
  conversationRef.current = conversation
  messagesRef.current = messages

  /** Sets the running stream, or changes it with `update` (which returns its argument when nothing changes). */
  const setActiveStream = (next: ActiveStream | null | ((s: ActiveStream | null) => ActiveStream | null)): void => {
    const stream = typeof next === 'function' ? next(activeRef.current) : next
    if (stream === activeRef.current) return
    activeRef.current = stream
    setActive(stream)
  }

  const flush = useCallback(() => {
    flushHandle.current = null
    if (pendingDeltas.current.size === 0) return
    const deltas = new Map(pendingDeltas.current)
    pendingDeltas.current.clear()
    setMessages((list) => list.map((m) => (deltas.has(m.id) ? { ...m, content: m.content + (deltas.get(m.id) ?? '') } : m)))
  }, [])

  const queueDelta = useCallback(
    (messageId: string, text: string) => {
      pendingDeltas.current.set(messageId, (pendingDeltas.current.get(messageId) ?? '') + text)
      if (flushHandle.current !== null) return
      // Hidden tabs get no animation frames; a timer keeps the text current there.
      flushHandle.current = document.hidden ? window.setTimeout(flush, 200) : window.requestAnimationFrame(flush)
    },
    [flush]
  )

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
      setDraftOverrides({})
      return
    }
    // A draft that just became this conversation is already on screen (and may be streaming); the view did
    // not change (send set it), so nothing in flight needs dropping.
    if (conversationRef.current?.id === conversationId) return
    resetLoad(true)
    setMessages([])
    setConversation(null)
    void reload(conversationId)
  }, [conversationId, reload, resetLoad])

  /**
   * Runs one streamed request: shows `base` plus placeholders at once, swaps in the real messages on
   * 'started', appends deltas, and finally re-reads the conversation. Resolves true when the app accepted it.
   */
  const run = useCallback(
    async (
      conv: Conversation,
      base: readonly Message[],
      userText: string | null,
      call: (requestId: string, onEvent: (event: ChatEvent) => void) => Promise<Message>
    ): Promise<boolean> => {
      const requestId = newRequestId()
      const nextSeq = (base.at(-1)?.seq ?? -1) + 1
      const shown = [...base]
      if (userText !== null) shown.push(placeholder(PENDING_USER_ID, 'user', conv.id, nextSeq, userText))
      shown.push(placeholder(PENDING_ASSISTANT_ID, 'assistant', conv.id, nextSeq + 1, ''))
      setMessages(shown)
      setActionError(null)
      setActiveStream({ requestId, conversationId: conv.id, assistantMessageId: null, loadProgress: null })
      let started = false
      const onEvent = (event: ChatEvent): void => {
        if (event.type === 'started') {
          started = true
          setActiveStream({ requestId, conversationId: conv.id, assistantMessageId: event.assistantMessage.id, loadProgress: null })
          if (viewRef.current !== conv.id) return
          flush()
          const fresh = event.userMessage === null ? [event.assistantMessage] : [event.userMessage, event.assistantMessage]
          setMessages([...base, ...fresh])
        } else if (event.type === 'loading') {
          setActiveStream((s) => (s === null || s.requestId !== requestId ? s : { ...s, loadProgress: event.progress }))
        } else {
          // the first text ends the model's loading (the same object after that, so no re-render per token)
          setActiveStream((s) => (s === null || s.loadProgress === null ? s : { ...s, loadProgress: null }))
          if (viewRef.current === conv.id) queueDelta(event.messageId, event.text)
        }
      }
      try {
        const final = await call(requestId, onEvent)
        started = true
        flush()
        if (viewRef.current === conv.id) setMessages((list) => list.map((m) => (m.id === final.id ? final : m)))
      } catch (e) {
        flush()
        if (viewRef.current === conv.id) setActionError(describeError(e))
      } finally {
        setActiveStream(null)
        onChanged()
      }
      if (viewRef.current === conv.id) await reload(conv.id)
      if (!started && userText !== null) {
        // The request failed before 'started': keep the text unless the app saved the message anyway.
        const last = messagesRef.current.filter((m) => m.role === 'user').at(-1)
        started = last !== undefined && last.id !== PENDING_USER_ID && last.content === userText
      }
      return started
    },
    [flush, queueDelta, onChanged, reload]
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
        conversationRef.current = conv
        setConversation(conv)
        viewRef.current = conv.id
        onCreated(conv)
      }
      const target = conv
      return run(target, messagesRef.current, content, (requestId, onEvent) =>
        api.chat.send({ requestId, conversationId: target.id, content }, onEvent)
      )
    },
    [api, draft, onCreated, run]
  )

  const regenerate = useCallback(async () => {
    const conv = conversationRef.current
    if (conv === null || activeRef.current !== null) return
    const list = messagesRef.current
    const lastUser = list.findLastIndex((m) => m.role === 'user')
    if (lastUser < 0) return
    await run(conv, list.slice(0, lastUser + 1), null, (requestId, onEvent) =>
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
      await run(conv, list.slice(0, index), content, (requestId, onEvent) =>
        api.chat.edit({ requestId, conversationId: conv.id, messageId, content }, onEvent)
      )
    },
    [api, run]
  )

  const stop = useCallback(async () => {
    const stream = activeRef.current
    if (stream === null) return
    try {
      await api.chat.stop(stream.requestId)
    } catch (e) {
      setActionError(describeError(e))
    }
  }, [api])

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

  useEffect(
    () => () => {
      if (flushHandle.current !== null) {
        window.cancelAnimationFrame(flushHandle.current)
        window.clearTimeout(flushHandle.current)
      }
    },
    []
  )

  const dismissError = useCallback(() => setActionError(null), [])

  return {
    conversation,
    messages,
    draft,
    loading,
    loadError,
    active,
    actionError,
    dismissError,
    send,
    regenerate,
    edit,
    stop,
    updateConversation
  }
}
