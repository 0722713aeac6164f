/**
 * @file The conversations file (JSON, version 1): what `conversations.export` writes and `conversations.import`
 * reads back. Reading trusts nothing: the nesting is measured before parsing, every field is checked (shapes, the
 * contract's lengths, roles, statuses, finite numbers), unknown fields are refused as in every API argument, and
 * each failure is a ValidationError naming the field ("conversations[2].messages[5].role: ...").
 *
 * ```
 * { "format": "tandem-conversations", "version": 1, "exportedAtMs": 1733900000000,
 *   "conversations": [{ "id", "title", "systemPrompt", "modelId", "sampling": { "temperature", "topP", "maxTokens" },
 *     "createdAtMs", "updatedAtMs", "parentId", "branchSeq",
 *     "document": null | { "name", "type", "bytes", "sha256", "createdAtMs", "text" },
 *     "messages": [{ "id", "seq", "role", "content", "status", "error", "createdAtMs", "updatedAtMs",
 *       "stats": null | { "ttftMs", "prefillTokensPerSec", "decodeTokensPerSec", "promptTokens", "generatedTokens",
 *         "model", "devices", "deviceBusy"?, "reusedTokens"?, "restoredTokens"?, "server"?: { "name", "usageReported" } } }] }] }
 * ```
 */
import { API_LIMITS, type DocumentTypeName, type Message, type MessageStats, type SamplingSettings } from '../../preload/api'
import { jsonNestsDeeperThan } from '../common/json-depth'
import { FieldReader, isRecord, readText, show } from '../common/reader'
import { MAX_STATS_DEVICES, MESSAGE_ROLES, MESSAGE_STATUSES, type ImportedConversation, type ImportedDocument, type ImportedMessage } from '../store'
import { id, path, samplingSettings, userText } from './api-validate'
import { DOCUMENT_TYPES } from './documents'
import { errorMessage, failInvalid, invalid } from './errors'

/** The file's `format`: what tells it apart from any other JSON. */
export const FILE_FORMAT = 'tandem-conversations'

/** The version this build writes and reads. */
export const FILE_VERSION = 1

/** Conversations one file may hold: far more than anyone keeps, and a bound on the loop before it runs. */
export const MAX_FILE_CONVERSATIONS = 100_000

/** Messages one conversation may hold in a file (a reply costs seconds: no real conversation comes near). */
export const MAX_FILE_MESSAGES = 100_000

/** Deepest nesting of a valid file is 8 (root, conversations, a conversation, messages, a message, stats, deviceBusy, one device). */
export const MAX_FILE_DEPTH = 16

/** Largest time accepted (ms since the epoch): any safe integer, as the store keeps them. */
const MAX_TIME_MS = Number.MAX_SAFE_INTEGER

/** A message as the file holds it: all of it but its conversation's id. */
export type FileMessage = Omit<Message, 'conversationId'>

/** A summarized file as the file holds it: what it was, and the text the model read from it. */
export interface FileDocument {
  readonly name: string
  readonly type: DocumentTypeName
  readonly bytes: number
  readonly sha256: string
  readonly createdAtMs: number
  readonly text: string
}

/** A conversation as the file holds it. */
export interface FileConversation {
  readonly id: string
  readonly title: string
  readonly systemPrompt: string
  readonly modelId: string | null
  readonly sampling: SamplingSettings
  readonly createdAtMs: number
  readonly updatedAtMs: number
  /** the conversation it was branched from, and the seq of the message it was branched at */
  readonly parentId: string | null
  readonly branchSeq: number | null
  readonly document: FileDocument | null
  readonly messages: readonly FileMessage[]
}

/** The whole file. */
export interface ConversationFile {
  readonly format: typeof FILE_FORMAT
  readonly version: typeof FILE_VERSION
  readonly exportedAtMs: number
  readonly conversations: readonly FileConversation[]
}

const FILE_FIELDS = ['format', 'version', 'exportedAtMs', 'conversations']
const CONVERSATION_FIELDS = ['id', 'title', 'systemPrompt', 'modelId', 'sampling', 'createdAtMs', 'updatedAtMs', 'parentId', 'branchSeq', 'document', 'messages']
const DOCUMENT_FIELDS = ['name', 'type', 'bytes', 'sha256', 'createdAtMs', 'text']
const MESSAGE_FIELDS = ['id', 'seq', 'role', 'content', 'status', 'error', 'createdAtMs', 'updatedAtMs', 'stats']
const STATS_FIELDS = ['ttftMs', 'prefillTokensPerSec', 'decodeTokensPerSec', 'promptTokens', 'generatedTokens', 'model', 'devices']
const STATS_OPTIONAL_FIELDS = ['deviceBusy', 'reusedTokens', 'restoredTokens', 'server']
const SERVER_FIELDS = ['name', 'usageReported']
const DEVICE_BUSY_FIELDS = ['id', 'name', 'busyMs']

const SHA256_HEX = /^[0-9a-f]{64}$/

/** The ids seen so far in one file: each conversation and message id may appear once. */
interface SeenIds {
  readonly conversations: Set<string>
  readonly messages: Set<string>
}

/**
 * The conversations of a file's JSON text, checked field by field; a reply that was still being written when it
 * was exported reads as 'stopped'. Throws ValidationError naming what is wrong (nothing is half-read).
 */
export function parseConversationFile(json: string): ImportedConversation[] {
  if (jsonNestsDeeperThan(Buffer.from(json, 'utf8'), MAX_FILE_DEPTH)) {
    throw invalid(`The file nests arrays and objects deeper than ${MAX_FILE_DEPTH} levels: it is not a Tandem conversations file.`)
  }
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch (err) {
    throw invalid(`The file is not valid JSON (${errorMessage(err).slice(0, 200)}).`)
  }
  if (!isRecord(value) || value.format !== FILE_FORMAT) {
    throw invalid(`This is not a Tandem conversations file: it has no "format": "${FILE_FORMAT}".`)
  }
  // The version before any other field, so a newer file says so rather than naming a field it added.
  if (value.version !== FILE_VERSION) {
    throw invalid(
      typeof value.version === 'number' && value.version > FILE_VERSION
        ? `This file is version ${value.version} of the conversations format, written by a newer Tandem; this one reads version ${FILE_VERSION}.`
        : `The file's "version" must be ${FILE_VERSION}, got ${show(value.version)}.`
    )
  }
  const file = new FieldReader(failInvalid, '', value, FILE_FIELDS)
  file.int('exportedAtMs', 0, MAX_TIME_MS)
  const seen: SeenIds = { conversations: new Set(), messages: new Set() }
  return file.records('conversations', MAX_FILE_CONVERSATIONS, (entry) => conversation(entry, seen))
}

/** An id field, once per file. */
function uniqueId(r: FieldReader, seen: Set<string>): string {
  const value = id(r.raw('id'), r.at('id'))
  if (seen.has(value)) r.reject('id', `${show(value)} appears more than once in the file`)
  seen.add(value)
  return value
}

/** A time in ms since the epoch. */
function time(r: FieldReader, key: string): number {
  return r.int(key, 0, MAX_TIME_MS)
}

function conversation(entry: FieldReader, seen: SeenIds): ImportedConversation {
  const c = new FieldReader(failInvalid, entry.path, entry.value, CONVERSATION_FIELDS)
  const conversationId = uniqueId(c, seen.conversations)
  let lastSeq = -1
  const messages = c.records('messages', MAX_FILE_MESSAGES, (m) => {
    const read = message(m, seen)
    if (read.seq <= lastSeq) m.reject('seq', `${read.seq} does not come after the previous message's ${lastSeq} (messages are in seq order)`)
    lastSeq = read.seq
    return read
  })
  return {
    id: conversationId,
    title: userText(c.raw('title'), c.at('title'), API_LIMITS.maxTitleChars),
    systemPrompt: userText(c.raw('systemPrompt'), c.at('systemPrompt'), API_LIMITS.maxSystemPromptChars),
    modelId: c.raw('modelId') === null ? null : path(c.raw('modelId'), c.at('modelId')),
    sampling: samplingSettings(c.raw('sampling'), c.at('sampling')),
    createdAtMs: time(c, 'createdAtMs'),
    updatedAtMs: time(c, 'updatedAtMs'),
    parentId: c.raw('parentId') === null ? null : id(c.raw('parentId'), c.at('parentId')),
    branchSeq: c.intOrNull('branchSeq', 0, Number.MAX_SAFE_INTEGER),
    document: c.raw('document') === null ? null : fileDocument(c.record('document', DOCUMENT_FIELDS)),
    messages
  }
}

function fileDocument(d: FieldReader): ImportedDocument {
  const name = userText(d.raw('name'), d.at('name'), API_LIMITS.maxFileNameChars)
  if (name.trim() === '') d.reject('name', 'must not be empty')
  const sha256 = d.text('sha256', 64)
  if (!SHA256_HEX.test(sha256)) d.reject('sha256', `expected 64 lower-case hex digits, got ${show(sha256)}`)
  return {
    name,
    type: d.choice('type', DOCUMENT_TYPES),
    bytes: d.int('bytes', 0, API_LIMITS.maxDocumentBytes),
    sha256,
    // the text read from the file: bounded by the import's own size
    text: userText(d.raw('text'), d.at('text'), API_LIMITS.maxImportBytes),
    createdAtMs: time(d, 'createdAtMs')
  }
}

function message(entry: FieldReader, seen: SeenIds): ImportedMessage {
  const m = new FieldReader(failInvalid, entry.path, entry.value, MESSAGE_FIELDS)
  const messageId = uniqueId(m, seen.messages)
  const status = m.choice('status', MESSAGE_STATUSES)
  return {
    id: messageId,
    seq: m.int('seq', 0, Number.MAX_SAFE_INTEGER),
    role: m.choice('role', MESSAGE_ROLES),
    content: userText(m.raw('content'), m.at('content'), API_LIMITS.maxMessageChars),
    // nothing writes it here: it ends where the file ends, as a reply cut off by a crash does
    status: status === 'streaming' ? 'stopped' : status,
    error: m.raw('error') === null ? null : userText(m.raw('error'), m.at('error'), API_LIMITS.maxMessageChars),
    createdAtMs: time(m, 'createdAtMs'),
    updatedAtMs: time(m, 'updatedAtMs'),
    stats: m.raw('stats') === null ? null : messageStats(m.record('stats', STATS_FIELDS, STATS_OPTIONAL_FIELDS))
  }
}

/** A finite, non-negative number (times, rates and token counts). */
function amount(r: FieldReader, key: string): number {
  return r.number(key, 0, Number.MAX_VALUE)
}

function messageStats(s: FieldReader): MessageStats {
  const deviceBusy =
    s.raw('deviceBusy') === undefined
      ? undefined
      : s.records('deviceBusy', MAX_STATS_DEVICES, (entry) => {
          const d = new FieldReader(failInvalid, entry.path, entry.value, DEVICE_BUSY_FIELDS)
          return { id: d.text('id', API_LIMITS.maxIdChars), name: d.text('name', API_LIMITS.maxTitleChars), busyMs: amount(d, 'busyMs') }
        })
  const reusedTokens = s.optionalInt('reusedTokens', 0, Number.MAX_SAFE_INTEGER)
  const restoredTokens = s.optionalInt('restoredTokens', 0, Number.MAX_SAFE_INTEGER)
  const server = s.raw('server') === undefined ? undefined : s.record('server', SERVER_FIELDS)
  // the store's field order, so a file written, read and written again is the same text
  return {
    ttftMs: amount(s, 'ttftMs'),
    prefillTokensPerSec: amount(s, 'prefillTokensPerSec'),
    decodeTokensPerSec: amount(s, 'decodeTokensPerSec'),
    promptTokens: amount(s, 'promptTokens'),
    generatedTokens: amount(s, 'generatedTokens'),
    model: s.text('model', API_LIMITS.maxPathChars),
    devices: s.list('devices', MAX_STATS_DEVICES).map((d, i) => readText(failInvalid, `${s.at('devices')}[${i}]`, d, API_LIMITS.maxIdChars)),
    ...(deviceBusy !== undefined && { deviceBusy }),
    ...(reusedTokens !== undefined && { reusedTokens }),
    ...(restoredTokens !== undefined && { restoredTokens }),
    ...(server !== undefined && { server: { name: server.text('name', API_LIMITS.maxServerNameChars), usageReported: server.bool('usageReported') } })
  }
}
