/** @file The typed values the store returns and accepts. Times are integer milliseconds since the Unix epoch. */
import type { JsonObject } from './rows'

/** Who wrote a message. */
export type MessageRole = 'system' | 'user' | 'assistant'

/** All roles, in the order the schema's CHECK lists them. */
export const MESSAGE_ROLES: readonly MessageRole[] = Object.freeze(['system', 'user', 'assistant'])

/** 'streaming' while tokens arrive; 'stopped' when the user (or a crash, see markInterrupted) cut it short. */
export type MessageStatus = 'complete' | 'streaming' | 'stopped' | 'error'

/** All statuses, in the order the schema's CHECK lists them. */
export const MESSAGE_STATUSES: readonly MessageStatus[] = Object.freeze(['complete', 'streaming', 'stopped', 'error'])

/** Generation statistics kept with an assistant message. */
export interface MessageStats {
  /** from request to first generated token */
  readonly ttftMs: number
  readonly prefillTokensPerSec: number
  readonly decodeTokensPerSec: number
  readonly promptTokens: number
  readonly generatedTokens: number
  /** model id or name that generated the message */
  readonly model: string
  /** devices that ran it, e.g. ['cpu'] or ['webgpu', 'cpu'] */
  readonly devices: readonly string[]
  /** per device: ms it was busy on this message (absent on messages stored before devices were tracked) */
  readonly deviceBusy?: readonly DeviceBusy[]
  /** prompt tokens not computed: taken from the live KV cache or a snapshot (absent on older messages) */
  readonly reusedTokens?: number
  /** of those, the ones a KV snapshot brought back */
  readonly restoredTokens?: number
  /** the other server that wrote it, and whether the token counts are its own (absent: written here) */
  readonly server?: RemoteStats
}

/** Who wrote a message on another server. */
export interface RemoteStats {
  readonly name: string
  readonly usageReported: boolean
}

/** One device's busy time on one message. */
export interface DeviceBusy {
  readonly id: string
  readonly name: string
  readonly busyMs: number
}

/** A conversation row. `deletedAtMs` is set while it sits soft-deleted (restorable until purged). */
export interface Conversation {
  readonly id: string
  readonly title: string
  readonly systemPrompt: string
  /** null: use the app's default model */
  readonly modelId: string | null
  /** per-conversation sampling overrides; the store keeps any JSON object, services validate its fields */
  readonly sampling: JsonObject
  readonly createdAtMs: number
  /** bumped by every edit and by message appends/updates; lists sort by it */
  readonly updatedAtMs: number
  readonly deletedAtMs: number | null
  /** the conversation this one was branched from (null: not a branch, or its parent was purged) */
  readonly parentId: string | null
  /** seq of the parent's message it was branched at (its copy is this one's last message at the start) */
  readonly branchSeq: number | null
}

/** Fields for a new conversation; omitted ones default to '' / null / {}. */
export interface NewConversation {
  readonly title?: string
  readonly systemPrompt?: string
  readonly modelId?: string | null
  /** any object that serialises to a JSON object (e.g. the engine's SamplingOptions or a partial of it) */
  readonly sampling?: object
}

/** A message row. `seq` orders messages within a conversation (0, 1, 2, ...; gaps after deletes). */
export interface Message {
  readonly id: string
  readonly conversationId: string
  readonly seq: number
  readonly role: MessageRole
  readonly content: string
  readonly status: MessageStatus
  /** what went wrong, for status 'error' */
  readonly error: string | null
  readonly createdAtMs: number
  readonly updatedAtMs: number
  readonly stats: MessageStats | null
}

/** Fields for a new message; it is appended after the conversation's last one. */
export interface NewMessage {
  readonly conversationId: string
  readonly role: MessageRole
  /** default '' (a streaming reply starts empty) */
  readonly content?: string
  /** default 'complete' */
  readonly status?: MessageStatus
  readonly error?: string | null
  readonly stats?: MessageStats | null
}

/** A partial update of a message; only the fields present are changed. */
export interface MessagePatch {
  readonly content?: string
  readonly status?: MessageStatus
  readonly error?: string | null
  readonly stats?: MessageStats | null
}

/** A piece of a search snippet; `match` pieces are the words that matched the query (render highlighted). */
export interface SnippetPart {
  readonly text: string
  readonly match: boolean
}

/** One search result: a conversation whose title matched (`messageId` null) or one of its messages. */
export interface SearchHit {
  readonly conversationId: string
  readonly title: string
  readonly messageId: string | null
  /** the title (for title hits) or an excerpt of the message around the matching words */
  readonly snippet: readonly SnippetPart[]
}

/** Options shared by the repository classes. */
export interface StoreOptions {
  /** clock in ms since epoch; tests pass a fake one. Default Date.now. */
  readonly now?: () => number
}
