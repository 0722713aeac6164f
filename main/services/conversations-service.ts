/**
 * @file Conversations as the API shows them: the store's rows turned into contract types (sampling
 * validated over the settings' defaults, search snippets flattened to text), soft delete with restore.
 */
import type {
  Conversation,
  ConversationDetail,
  ConversationPatch,
  ConversationSummary,
  DocumentInfo,
  Message,
  SearchHit
} from '../../preload/api'
import type { Conversation as StoredConversation, DocumentRecord, Message as StoredMessage, SearchWorker, Store } from '../store'
import { DOCUMENT_TYPES } from './documents/extract'
import { API_LIMITS } from '../../preload/api'
import { samplingSettings } from './api-validate'
import { ApiError } from './errors'
import type { SettingsService } from './settings-service'

/** How long a deleted conversation can be restored before startup purges it. */
export const DELETED_RETENTION_MS = 7 * 24 * 3600 * 1000

/** Added to a branch's title (the parent's). */
const BRANCH_SUFFIX = ' (branch)'

/** Most search hits returned at once. */
const SEARCH_LIMIT = 50

/** A stored message's fields but its conversation's id: what an export file holds of it. */
export function messageFields(m: StoredMessage): Omit<Message, 'conversationId'> {
  return {
    id: m.id,
    seq: m.seq,
    role: m.role,
    content: m.content,
    status: m.status,
    error: m.error,
    createdAtMs: m.createdAtMs,
    updatedAtMs: m.updatedAtMs,
    stats: m.stats === null ? null : { ...m.stats, devices: [...m.stats.devices] }
  }
}

/** A stored message as the API shows it. */
export function toApiMessage(m: StoredMessage): Message {
  return { ...messageFields(m), conversationId: m.conversationId }
}

/** A stored file as the API shows it (a type this build does not know reads as text). */
export function toDocumentInfo(d: DocumentRecord): DocumentInfo {
  return { name: d.name, type: DOCUMENT_TYPES.find((t) => t === d.type) ?? 'text', bytes: d.bytes, sha256: d.sha256, textChars: d.textChars }
}

/** A conversation as the list shows it. */
export function toSummary(c: ConversationSummary): ConversationSummary {
  return { id: c.id, title: c.title, parentId: c.parentId, modelId: c.modelId, createdAtMs: c.createdAtMs, updatedAtMs: c.updatedAtMs }
}

/** Conversation operations; synchronous, like the store under them. */
export class ConversationsService {
  private readonly removedListeners = new Set<(id: string) => void>()

  constructor(
    private readonly store: Pick<Store, 'conversations' | 'messages' | 'documents'>,
    private readonly settings: SettingsService,
    /** answers searches off the main thread (its own connection), so a long search never holds up this one */
    private readonly searcher: Pick<SearchWorker, 'search'>
  ) {}

  /** Conversations not deleted, most recently updated first. */
  list(): ConversationSummary[] {
    return this.store.conversations.list().map(toSummary)
  }

  /** A new conversation; unset fields come from the settings (model, sampling). */
  create(init: ConversationPatch): Conversation {
    const s = this.settings.get()
    const stored = this.store.conversations.create({
      title: init.title ?? '',
      systemPrompt: init.systemPrompt ?? '',
      modelId: init.modelId === undefined ? s.defaultModelId : init.modelId,
      sampling: init.sampling ?? s.sampling
    })
    return this.toApi(stored)
  }

  /** The conversation, its messages in order, and the file it summarizes. */
  get(id: string): ConversationDetail {
    const document = this.store.documents.get(id)
    return { conversation: this.require(id), messages: this.messages(id), document: document === undefined ? null : toDocumentInfo(document) }
  }

  /** Applies the fields present in `patch`. */
  update(id: string, patch: ConversationPatch): Conversation {
    this.require(id)
    const c = this.store.conversations
    if (patch.title !== undefined) c.rename(id, patch.title)
    if (patch.systemPrompt !== undefined) c.setSystemPrompt(id, patch.systemPrompt)
    if (patch.modelId !== undefined) c.setModel(id, patch.modelId)
    if (patch.sampling !== undefined) c.setSampling(id, patch.sampling)
    return this.require(id)
  }

  /** Soft delete: hidden from list and search until restored or purged; tells the onRemoved listeners. */
  remove(id: string): void {
    this.store.conversations.softDelete(id)
    for (const listener of this.removedListeners) listener(id)
  }

  /**
   * Calls `listener` with the id of each conversation removed, after it is removed (the chat stops a reply
   * still being written into it); returns the function that unsubscribes it.
   */
  onRemoved(listener: (id: string) => void): () => void {
    this.removedListeners.add(listener)
    return () => {
      this.removedListeners.delete(listener)
    }
  }

  /** Undoes remove. */
  restore(id: string): Conversation {
    this.store.conversations.restore(id)
    return this.require(id)
  }

  /**
   * A new conversation that starts as a copy of `id` up to and including `messageId` (system prompt, model and
   * sampling too), listed under it. Its first reply reuses the KV snapshot of the copied prefix, which is the
   * parent's own token sequence.
   */
  branch(id: string, messageId: string): Conversation {
    const parent = this.require(id)
    const m = this.store.messages.get(messageId)
    if (m === undefined || m.conversationId !== id) throw new ApiError('NotFoundError', `Message ${messageId} is not in conversation ${id}.`)
    if (m.status === 'streaming') throw new ApiError('BusyError', 'A reply being written cannot be branched from; stop it or wait for it first.')
    // a branch of a branch keeps one suffix: the sidebar's nesting shows the depth
    const title = parent.title === '' || parent.title.endsWith(BRANCH_SUFFIX) ? parent.title : `${parent.title}${BRANCH_SUFFIX}`.slice(0, API_LIMITS.maxTitleChars)
    return this.toApi(this.store.conversations.branch(id, m.seq, title))
  }

  /** Full-text search over titles and messages; snippets as plain text. */
  async search(query: string): Promise<SearchHit[]> {
    const hits = await this.searcher.search(query, SEARCH_LIMIT)
    return hits.map((h) => ({
      conversationId: h.conversationId,
      title: h.title,
      messageId: h.messageId,
      snippet: h.snippet.map((part) => part.text).join('')
    }))
  }

  /** A conversation that exists and is not deleted, or NotFoundError. */
  require(id: string): Conversation {
    const c = this.store.conversations.get(id)
    if (c === undefined) throw new ApiError('NotFoundError', `Conversation ${id} not found.`)
    if (c.deletedAtMs !== null) throw new ApiError('NotFoundError', `Conversation ${id} was deleted.`)
    return this.toApi(c)
  }

  /** Messages of a conversation in order. */
  messages(id: string): Message[] {
    return this.store.messages.list(id).map(toApiMessage)
  }

  /** Purges conversations deleted longer ago than DELETED_RETENTION_MS; returns how many. */
  purgeDeleted(): number {
    return this.store.conversations.purgeDeleted(DELETED_RETENTION_MS)
  }

  private toApi(c: StoredConversation): Conversation {
    const defaults = this.settings.sampling()
    let sampling = defaults
    try {
      // Stored overrides are any JSON object; take the known fields and fall back to defaults when invalid.
      const picked = { ...defaults, ...pick(c.sampling, ['temperature', 'topP', 'maxTokens']) }
      sampling = samplingSettings(picked)
    } catch {
      sampling = defaults
    }
    return {
      id: c.id,
      title: c.title,
      parentId: c.parentId,
      modelId: c.modelId,
      createdAtMs: c.createdAtMs,
      updatedAtMs: c.updatedAtMs,
      systemPrompt: c.systemPrompt,
      sampling
    }
  }
}

function pick(o: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k]
  return out
}
