/**
 * @file The search worker's messages (search-worker.ts ⇄ search-worker-client.ts), and the readers that
 * check them on arrival: a worker message is a boundary like any other.
 */
import { failWith, FieldReader } from '../common/reader'
import { MAX_QUERY_CHARS, MAX_SEARCH_LIMIT, SNIPPET_SCAN_CHARS } from './search-query'
import type { SearchHit, SnippetPart } from './types'

/** What the worker is started with. */
export interface SearchWorkerData {
  readonly file: string
}

/** Parent → worker: one search, or the request to close the connection and exit. */
export type SearchRequest = { readonly type: 'search'; readonly id: number; readonly query: string; readonly limit: number } | { readonly type: 'close' }

/** Worker → parent: a search's hits, or why it failed. */
export type SearchResponse = { readonly id: number; readonly hits: readonly SearchHit[] } | { readonly id: number; readonly error: string }

/** A message that does not follow this protocol. */
export class SearchProtocolError extends Error {
  override readonly name = 'SearchProtocolError'
}

const fail = failWith((message) => new SearchProtocolError(message))

/** Longest id, title or error text a response may carry (titles are far shorter; this only stops garbage). */
const MAX_FIELD_CHARS = 1_000_000

/** Most parts in one snippet: a title highlighted whole can alternate plain and matching words. */
const MAX_SNIPPET_PARTS = SNIPPET_SCAN_CHARS

export function readWorkerData(value: unknown): SearchWorkerData {
  return { file: new FieldReader(fail, 'workerData', value, ['file']).text('file', MAX_FIELD_CHARS) }
}

export function readRequest(value: unknown): SearchRequest {
  const r = new FieldReader(fail, 'request', value, ['type'], ['id', 'query', 'limit'])
  if (r.choice('type', ['search', 'close']) === 'close') return { type: 'close' }
  return {
    type: 'search',
    id: r.int('id', 0, Number.MAX_SAFE_INTEGER),
    query: r.text('query', MAX_QUERY_CHARS * 4),
    limit: r.int('limit', 0, MAX_SEARCH_LIMIT)
  }
}

export function readResponse(value: unknown): SearchResponse {
  const r = new FieldReader(fail, 'response', value, ['id'], ['hits', 'error'])
  const id = r.int('id', 0, Number.MAX_SAFE_INTEGER)
  if (r.raw('error') !== undefined) return { id, error: r.text('error', MAX_FIELD_CHARS) }
  const hits = r.records('hits', MAX_SEARCH_LIMIT, (h): SearchHit => ({
    conversationId: h.text('conversationId', MAX_FIELD_CHARS),
    title: h.text('title', MAX_FIELD_CHARS),
    messageId: h.textOrNull('messageId', MAX_FIELD_CHARS),
    snippet: h.records('snippet', MAX_SNIPPET_PARTS, (p): SnippetPart => ({ text: p.text('text', MAX_FIELD_CHARS), match: p.bool('match') }))
  }))
  return { id, hits }
}
