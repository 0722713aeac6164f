/**
 * @file Export and import of conversations (issue #16): one, several or all as Markdown to read or as the JSON
 * file (conversation-file.ts) that import takes back, with ids, times, stats, branch links and summarized files.
 *
 * Duplicates: a conversation of the file whose id is here and not deleted is skipped and reported, never
 * overwritten. One deleted (still restorable, see DELETED_RETENTION_MS) is replaced by the file's copy and listed
 * again: importing an export is how a deleted conversation comes back, and the user had already let go of the
 * copy here. The store does it all in one transaction, so a file with any error imports nothing.
 */
import type { ExportFormat, ImportResult } from '../../preload/api'
import { StoreDataError, type Store } from '../store'
import { FILE_FORMAT, FILE_VERSION, parseConversationFile, type ConversationFile, type FileConversation, type FileDocument } from './conversation-file'
import { conversationsMarkdown } from './conversation-markdown'
import { messageFields, toDocumentInfo, toSummary, type ConversationsService } from './conversations-service'

/** Conversations out to a file, and back in. */
export class ConversationsTransfer {
  constructor(
    private readonly store: Pick<Store, 'conversations' | 'messages' | 'documents' | 'imports'>,
    private readonly conversations: ConversationsService,
    /** the export's time stamp (ms since the epoch) */
    private readonly now: () => number = Date.now
  ) {}

  /**
   * The conversations (null: every one not deleted), oldest first, as Markdown or as the JSON file. NotFoundError
   * for an id that is unknown or deleted.
   */
  export(ids: readonly string[] | null, format: ExportFormat): string {
    const wanted = ids === null ? this.store.conversations.list().map((c) => c.id) : [...new Set(ids)]
    // oldest first, ties by id: the same conversations give the same file, whatever order they were listed in
    const records = wanted.map((id) => this.record(id)).sort((a, b) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    if (format === 'markdown') {
      const exported = new Map(records.map((c) => [c.id, c.title]))
      return conversationsMarkdown(records, (id) => exported.get(id) ?? this.listedTitle(id))
    }
    const file: ConversationFile = { format: FILE_FORMAT, version: FILE_VERSION, exportedAtMs: this.now(), conversations: records }
    return `${JSON.stringify(file, null, 2)}\n`
  }

  /**
   * Adds the conversations of a JSON file (see the file comment for duplicates and deleted ones). ValidationError
   * naming the field for anything malformed; nothing is imported then.
   */
  import(json: string): ImportResult {
    const parsed = parseConversationFile(json)
    const outcome = this.store.imports.importAll(parsed)
    const titles = new Map(parsed.map((c) => [c.id, c.title]))
    return {
      imported: outcome.imported.map((id) => toSummary(this.conversations.require(id))),
      duplicates: outcome.duplicates.map((id) => ({ id, title: titles.get(id) ?? '' }))
    }
  }

  /** One conversation as the file holds it. */
  private record(id: string): FileConversation {
    const c = this.conversations.require(id)
    return {
      id: c.id,
      title: c.title,
      systemPrompt: c.systemPrompt,
      modelId: c.modelId,
      sampling: c.sampling,
      createdAtMs: c.createdAtMs,
      updatedAtMs: c.updatedAtMs,
      parentId: c.parentId,
      branchSeq: this.store.conversations.get(id)?.branchSeq ?? null,
      document: this.document(id),
      messages: this.store.messages.list(id).map(messageFields)
    }
  }

  /**
   * The conversation's summarized file with its text, or null. A file whose stored text is damaged (its checksum
   * fails) is left out rather than failing the export of everything else, as a damaged message is listed in place.
   */
  private document(id: string): FileDocument | null {
    const info = this.store.documents.get(id)
    if (info === undefined) return null
    let text: string | undefined
    try {
      text = this.store.documents.text(id)
    } catch (err) {
      if (err instanceof StoreDataError) return null
      throw err
    }
    if (text === undefined) return null
    return { name: info.name, type: toDocumentInfo(info).type, bytes: info.bytes, sha256: info.sha256, createdAtMs: info.createdAtMs, text }
  }

  /** The title of a conversation that is listed (not deleted), or null. */
  private listedTitle(id: string): string | null {
    const c = this.store.conversations.get(id)
    return c === undefined || c.deletedAtMs !== null ? null : c.title
  }
}
