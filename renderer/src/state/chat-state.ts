/**
 * @file The shape of the chat state (use-chat.ts): what the open conversation holds, the running stream (a reply
 * or a file's summary) and the actions on them.
 */
import type { Conversation, ConversationPatch, DocumentInfo, Message, ModelLoadProgress, SamplingSettings } from '../../../preload/api'
import type { UiError } from '../lib/errors'

/** Settings of a chat that does not exist yet. */
export interface DraftSettings {
  readonly modelId: string | null
  readonly systemPrompt: string
  readonly sampling: SamplingSettings
}

/** How far a file's summary is. */
export interface SummaryRun {
  readonly fileName: string
  /** 'reading': the file is read, sent and its text extracted; 'summarizing': its conversation exists */
  readonly phase: 'reading' | 'summarizing'
  /** model calls of the map-reduce done, of `total` known so far (0 of 0 until the first report) */
  readonly done: number
  readonly total: number
  /** time left at the pace so far (ms); null before the first step ends */
  readonly etaMs: number | null
}

/** The running generation (at most one at a time, in any conversation). */
export interface ActiveStream {
  readonly requestId: string
  /** null while a summary's conversation does not exist yet */
  readonly conversationId: string | null
  /** set once the app confirmed the request ('started') */
  readonly assistantMessageId: string | null
  /** what opening the model is doing, until the reply's first text (null: the model was open, or text arrived) */
  readonly loadProgress: ModelLoadProgress | null
  /** the file being summarized and how far; null for a chat reply */
  readonly summary: SummaryRun | null
}

/** A summary request answered with a summary made before (same bytes): offered to be made again. */
export interface ReusedSummary {
  readonly conversationId: string
  /** kept for "Summarize again" */
  readonly file: File
}

/** What the chat hook exposes. */
export interface ChatState {
  /** null while the view is a new, unsaved chat */
  readonly conversation: Conversation | null
  readonly messages: readonly Message[]
  /** the file this conversation summarizes, or null */
  readonly document: DocumentInfo | null
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
  /** summarizes a file into a new conversation; `reuse`: answer with the stored summary of the same bytes, if any */
  readonly summarize: (file: File, reuse: boolean) => Promise<void>
  /** the stored summary the last summarize was answered with, until dismissed or another starts */
  readonly reused: ReusedSummary | null
  readonly dismissReused: () => void
  readonly stop: () => Promise<void>
  readonly updateConversation: (patch: ConversationPatch) => Promise<UiError | null>
}
