/**
 * @file Hand-written validators for every channel's arguments, typed by ApiArgs so each must produce
 * exactly what `Api` declares. Requests arrive from another process (renderer) or the network (HTTP), so
 * nothing is trusted: shapes, unknown keys, string lengths (API_LIMITS) and number ranges are all checked,
 * and every failure is a ValidationError naming the channel and field.
 */
import {
  API_LIMITS,
  type ApiChannel,
  type ConversationPatch,
  type DownloadRequest,
  type EditRequest,
  type LocalApiPatch,
  type ExportFormat,
  type RegenerateRequest,
  type RemoteServerInit,
  type NpuQuantizationSetting,
  type SamplingSettings,
  type SendRequest,
  type SettingsPatch,
  type SummarizeRequest,
  type ThemeSetting
} from '../../preload/api'
import { checkRegistrationName } from '../engine'
import type { ApiArgs } from './api-types'
import { readArray, readBoolean, readChoice, readInteger, readNumber, readRecord, readText, type JsonRecord } from '../common/reader'
import { ApiError, failInvalid, invalid } from './errors'
import { placementSetting } from './placement-setting'
import { isCatalogId } from './downloads'

/** One validator per channel: raw arguments (unknown) in, typed arguments out, or a ValidationError. */
export type ApiValidators = { readonly [C in ApiChannel]: (args: unknown) => ApiArgs<C> }

/** Themes the settings accept. */
export const THEMES: readonly ThemeSetting[] = Object.freeze(['system', 'light', 'dark'])

/** The arguments array, which must have exactly `count` entries. */
function argList(args: unknown, count: number): readonly unknown[] {
  return readArray(failInvalid, 'arguments', args, count, count)
}

/** An object whose keys are all in `allowed` (so a typo is an error, not a silently ignored field). */
function object(value: unknown, field: string, allowed: readonly string[]): JsonRecord {
  return readRecord(failInvalid, field, value, [], allowed)
}

/** A string of at most `maxChars` characters. */
export function text(value: unknown, field: string, maxChars: number): string {
  return readText(failInvalid, field, value, maxChars)
}

/** Lone UTF-16 surrogates (halves of a pair, alone) and NUL: see userText. */
const BROKEN_TEXT = /[\p{Cs}\u0000]/gu

/**
 * Text people write (messages, titles, system prompts, search queries), with each lone surrogate and NUL
 * replaced by U+FFFD. Replaced rather than refused: they arrive in pasted text (a cut emoji, a binary
 * file's bytes) and refusing would lose the whole message over a character the user cannot see; U+FFFD
 * shows where the text was broken. Neither may be stored as given: a lone surrogate has no UTF-8 form
 * (the database would hold something other than what the model and the screen saw), and NUL ends strings
 * in C code (it cut FTS5's search snippets short). Ids and paths are refused instead (see id, path).
 */
export function userText(value: unknown, field: string, maxChars: number): string {
  return text(value, field, maxChars).replace(BROKEN_TEXT, '\uFFFD')
}

/** A non-empty id without control characters. */
export function id(value: unknown, field: string): string {
  const s = text(value, field, API_LIMITS.maxIdChars)
  // ids are printable; a control character means garbage input
  if (s === '' || /[\u0000-\u001f]/.test(s)) throw invalid(`${field} must be a non-empty id`)
  return s
}

/** A non-empty path without NUL bytes (which every file API would reject less clearly). */
export function path(value: unknown, field: string): string {
  const s = text(value, field, API_LIMITS.maxPathChars)
  if (s.trim() === '' || s.includes('\u0000')) throw invalid(`${field} must be a non-empty path`)
  return s
}

/** Provider option keys: what vendor providers use (device_type, config_file, cache_dir, htp_performance_mode). */
const PROVIDER_OPTION_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** A provider library's options: at most API_LIMITS.maxProviderOptions string values under plain keys. */
export function providerOptions(value: unknown, field: string): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(`${field} must be an object of strings`)
  const entries = Object.entries(value)
  if (entries.length > API_LIMITS.maxProviderOptions) throw invalid(`${field}: at most ${API_LIMITS.maxProviderOptions} options`)
  const out: Record<string, string> = {}
  for (const [k, v] of entries) {
    if (k.length > API_LIMITS.maxProviderOptionKeyChars || !PROVIDER_OPTION_KEY.test(k)) {
      throw invalid(`${field}: option names are 1–${API_LIMITS.maxProviderOptionKeyChars} letters, digits, '.', '_' or '-', got ${JSON.stringify(k.slice(0, 80))}`)
    }
    out[k] = text(v, `${field}.${k}`, API_LIMITS.maxPathChars)
  }
  return out
}

/** A provider library's registration name (the engine's rule: letters, digits, '.', '_', '-'). */
export function providerName(value: unknown, field: string): string {
  const s = text(value, field, API_LIMITS.maxProviderNameChars)
  try {
    checkRegistrationName(s)
  } catch (err) {
    throw invalid(`${field}: ${err instanceof Error ? err.message : String(err)}`)
  }
  return s
}

/** A number in [min, max]; `integer` additionally requires a whole number. */
function numberIn(value: unknown, field: string, min: number, max: number, integer = false): number {
  return integer ? readInteger(failInvalid, field, value, min, max) : readNumber(failInvalid, field, value, min, max)
}

/** A message's text: within the limit and not blank. */
export function messageContent(value: unknown, field: string): string {
  const s = userText(value, field, API_LIMITS.maxMessageChars)
  if (s.trim() === '') throw invalid('The message is empty: type something to send.')
  return s
}

/** Sampling settings with every field present and in range. */
export function samplingSettings(value: unknown, field = 'sampling'): SamplingSettings {
  const o = object(value, field, ['temperature', 'topP', 'maxTokens'])
  return {
    temperature: numberIn(o.temperature, `${field}.temperature`, 0, API_LIMITS.maxTemperature),
    // topP 0 would keep no token at all; the smallest meaningful value is a tiny positive mass.
    topP: numberIn(o.topP, `${field}.topP`, Number.MIN_VALUE, 1),
    maxTokens: numberIn(o.maxTokens, `${field}.maxTokens`, 1, API_LIMITS.maxReplyTokens, true)
  }
}

/** The NPU quantization setting: W8A8 on or off, and the share of layers whose shadow is pruned. */
export function npuQuantization(value: unknown, field = 'npuQuantization'): NpuQuantizationSetting {
  const o = object(value, field, ['w8a8', 'shadowPrunedPercent'])
  if (typeof o.w8a8 !== 'boolean') throw invalid(`${field}.w8a8 must be true or false`)
  return { w8a8: o.w8a8, shadowPrunedPercent: numberIn(o.shadowPrunedPercent, `${field}.shadowPrunedPercent`, 0, 100) }
}

/** A KV snapshot budget in bytes: a whole number from 0 (keep none) to API_LIMITS.maxKvSnapshotBudgetBytes. */
export function kvSnapshotBudget(value: unknown, field = 'kvSnapshotBudgetBytes'): number {
  return numberIn(value, field, 0, API_LIMITS.maxKvSnapshotBudgetBytes, true)
}

/** A `sinceMs` for devices.usage: an epoch time in ms (0 = everything in the window). */
function sinceMs(value: unknown, field: string): number {
  return readNumber(failInvalid, field, value, 0, Number.MAX_VALUE)
}

/** A model id (absolute path) or null for "the default model". */
function modelIdOrNull(value: unknown, field: string): string | null {
  return value === null ? null : path(value, field)
}

/** A theme setting. */
export function theme(value: unknown, field = 'theme'): ThemeSetting {
  return readChoice(failInvalid, field, value, THEMES)
}

function conversationPatch(value: unknown, field: string): ConversationPatch {
  const o = object(value, field, ['title', 'systemPrompt', 'modelId', 'sampling'])
  return {
    ...(o.title !== undefined && { title: userText(o.title, `${field}.title`, API_LIMITS.maxTitleChars) }),
    ...(o.systemPrompt !== undefined && {
      systemPrompt: userText(o.systemPrompt, `${field}.systemPrompt`, API_LIMITS.maxSystemPromptChars)
    }),
    ...(o.modelId !== undefined && { modelId: modelIdOrNull(o.modelId, `${field}.modelId`) }),
    ...(o.sampling !== undefined && { sampling: samplingSettings(o.sampling, `${field}.sampling`) })
  }
}

function settingsPatch(value: unknown, field: string): SettingsPatch {
  const o = object(value, field, ['defaultModelId', 'theme', 'sampling', 'npuQuantization', 'kvSnapshotBudgetBytes'])
  return {
    ...(o.kvSnapshotBudgetBytes !== undefined && { kvSnapshotBudgetBytes: kvSnapshotBudget(o.kvSnapshotBudgetBytes, `${field}.kvSnapshotBudgetBytes`) }),
    ...(o.npuQuantization !== undefined && { npuQuantization: npuQuantization(o.npuQuantization, `${field}.npuQuantization`) }),
    ...(o.defaultModelId !== undefined && { defaultModelId: modelIdOrNull(o.defaultModelId, `${field}.defaultModelId`) }),
    ...(o.theme !== undefined && { theme: theme(o.theme, `${field}.theme`) }),
    ...(o.sampling !== undefined && { sampling: samplingSettings(o.sampling, `${field}.sampling`) })
  }
}

function sendRequest(value: unknown): SendRequest {
  const o = object(value, 'request', ['requestId', 'conversationId', 'content'])
  return {
    requestId: id(o.requestId, 'request.requestId'),
    conversationId: id(o.conversationId, 'request.conversationId'),
    content: messageContent(o.content, 'request.content')
  }
}

function regenerateRequest(value: unknown): RegenerateRequest {
  const o = object(value, 'request', ['requestId', 'conversationId'])
  return { requestId: id(o.requestId, 'request.requestId'), conversationId: id(o.conversationId, 'request.conversationId') }
}

function editRequest(value: unknown): EditRequest {
  const o = object(value, 'request', ['requestId', 'conversationId', 'messageId', 'content'])
  return {
    requestId: id(o.requestId, 'request.requestId'),
    conversationId: id(o.conversationId, 'request.conversationId'),
    messageId: id(o.messageId, 'request.messageId'),
    content: messageContent(o.content, 'request.content')
  }
}

/** Characters of base64 that encode `bytes` bytes (padded). */
export function base64Chars(bytes: number): number {
  return Math.ceil(bytes / 3) * 4
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** A file's bytes as base64 text: the alphabet only, whole quads, at most maxDocumentBytes decoded. */
function fileData(value: unknown, field: string, fileName: string): string {
  if (typeof value === 'string' && value.length > base64Chars(API_LIMITS.maxDocumentBytes)) {
    throw new ApiError('PayloadTooLargeError', `${fileName} is larger than ${API_LIMITS.maxDocumentBytes / 2 ** 20} MiB, the largest file that can be summarized.`)
  }
  const data = readText(failInvalid, field, value, base64Chars(API_LIMITS.maxDocumentBytes))
  if (data.length % 4 !== 0 || !BASE64.test(data)) throw invalid(`${field} must be base64 (A–Z, a–z, 0–9, +, /, padded with =).`)
  return data
}

function summarizeRequest(value: unknown): SummarizeRequest {
  const o = object(value, 'request', ['requestId', 'fileName', 'data', 'reuse'])
  const fileName = userText(o.fileName, 'request.fileName', API_LIMITS.maxFileNameChars).trim()
  if (fileName === '') throw invalid('request.fileName must not be empty.')
  return {
    requestId: id(o.requestId, 'request.requestId'),
    fileName,
    data: fileData(o.data, 'request.data', fileName),
    reuse: readBoolean(failInvalid, 'request.reuse', o.reuse)
  }
}

/** What conversations.export writes. */
export const EXPORT_FORMATS: readonly ExportFormat[] = Object.freeze(['markdown', 'json'])

/** The conversations to export: a list of ids (at most maxExportIds), or null for all of them. */
function exportIds(value: unknown, field: string): string[] | null {
  if (value === null) return null
  return readArray(failInvalid, field, value, API_LIMITS.maxExportIds).map((v, i) => id(v, `${field}[${i}]`))
}

/**
 * A conversations file's JSON text, at most maxImportBytes as UTF-8 (its characters are counted first: never more
 * than its bytes, and free). Its content is read by the import itself (conversation-file.ts).
 */
function importText(value: unknown, field: string): string {
  const tooLarge = `The file is larger than ${API_LIMITS.maxImportBytes / 2 ** 20} MiB, the largest that can be imported.`
  if (typeof value === 'string' && (value.length > API_LIMITS.maxImportBytes || Buffer.byteLength(value, 'utf8') > API_LIMITS.maxImportBytes)) {
    throw new ApiError('PayloadTooLargeError', tooLarge)
  }
  return text(value, field, API_LIMITS.maxImportBytes)
}

/** The local API's setting: on or off, and a port a user program may listen on. */
export function localApiPatch(value: unknown, field = 'patch'): LocalApiPatch {
  const o = object(value, field, ['enabled', 'port'])
  return {
    enabled: readBoolean(failInvalid, `${field}.enabled`, o.enabled),
    port: readInteger(failInvalid, `${field}.port`, o.port, API_LIMITS.minApiPort, API_LIMITS.maxApiPort)
  }
}

/** A bearer key: 16 to 200 printable ASCII characters without spaces (what an Authorization header can carry). */
export function apiKey(value: unknown, field = 'key'): string {
  const key = text(value, field, 200)
  if (!/^[\x21-\x7e]{16,200}$/.test(key)) throw invalid(`${field} must be 16 to 200 printable characters without spaces.`)
  return key
}

/** A model catalog id (lower-case letters, digits, '.', '_', '-'). */
function catalogId(value: unknown, field: string): string {
  const s = text(value, field, API_LIMITS.maxIdChars)
  if (!isCatalogId(s)) throw invalid(`${field} must be a catalog id (lower-case letters, digits, '.', '_' and '-')`)
  return s
}

function downloadRequest(value: unknown): DownloadRequest {
  const o = object(value, 'request', ['requestId', 'catalogId'])
  return { requestId: id(o.requestId, 'request.requestId'), catalogId: catalogId(o.catalogId, 'request.catalogId') }
}

/** A server to add: a name, a URL and a key (or null), each within its limit (the service checks the URL's rules). */
function serverInit(value: unknown): RemoteServerInit {
  const o = object(value, 'init', ['name', 'url', 'apiKey'])
  return { name: userText(o.name, 'init.name', API_LIMITS.maxServerNameChars), url: text(o.url, 'init.url', API_LIMITS.maxServerUrlChars), apiKey: apiKeyOrNull(o.apiKey, 'init.apiKey') }
}

/** A server's key: printable text within its limit, or null for none. */
function apiKeyOrNull(value: unknown, field: string): string | null {
  if (value === null) return null
  const s = text(value, field, API_LIMITS.maxApiKeyChars)
  if (/[\u0000-\u001f\u007f]/.test(s)) throw invalid(`${field} must be printable text (it is sent in an HTTP header)`)
  return s
}

const none = (args: unknown): [] => {
  argList(args, 0)
  return []
}

/** The validators, one per channel; the mapped type makes a missing or mistyped entry a compile error. */
export const API_VALIDATORS: ApiValidators = {
  'app:version': none,
  'app:notices': none,
  'models:list': none,
  'models:folders': none,
  'models:addFolder': (args) => [path(argList(args, 1)[0], 'path')],
  'models:removeFolder': (args) => [path(argList(args, 1)[0], 'path')],
  'models:addFile': (args) => [path(argList(args, 1)[0], 'path')],
  'models:remove': (args) => [path(argList(args, 1)[0], 'modelId')],
  'models:catalog': none,
  'models:download': (args) => [downloadRequest(argList(args, 1)[0])],
  'models:pauseDownload': (args) => [catalogId(argList(args, 1)[0], 'catalogId')],
  'models:cancelDownload': (args) => [catalogId(argList(args, 1)[0], 'catalogId')],
  'servers:list': none,
  'servers:add': (args) => [serverInit(argList(args, 1)[0])],
  'servers:setKey': (args) => {
    const [serverId, apiKey] = argList(args, 2)
    return [id(serverId, 'id'), apiKeyOrNull(apiKey, 'apiKey')]
  },
  'servers:remove': (args) => [id(argList(args, 1)[0], 'id')],
  'conversations:list': none,
  'conversations:create': (args) => [conversationPatch(argList(args, 1)[0], 'init')],
  'conversations:get': (args) => [id(argList(args, 1)[0], 'id')],
  'conversations:update': (args) => {
    const [convId, patch] = argList(args, 2)
    return [id(convId, 'id'), conversationPatch(patch, 'patch')]
  },
  'conversations:remove': (args) => [id(argList(args, 1)[0], 'id')],
  'conversations:restore': (args) => [id(argList(args, 1)[0], 'id')],
  'conversations:search': (args) => [userText(argList(args, 1)[0], 'query', API_LIMITS.maxSearchChars)],
  'conversations:branch': (args) => {
    const [convId, messageId] = argList(args, 2)
    return [id(convId, 'id'), id(messageId, 'messageId')]
  },
  'conversations:export': (args) => {
    const [ids, format] = argList(args, 2)
    return [exportIds(ids, 'ids'), readChoice(failInvalid, 'format', format, EXPORT_FORMATS)]
  },
  'conversations:import': (args) => [importText(argList(args, 1)[0], 'json')],
  'chat:send': (args) => [sendRequest(argList(args, 1)[0])],
  'chat:regenerate': (args) => [regenerateRequest(argList(args, 1)[0])],
  'chat:edit': (args) => [editRequest(argList(args, 1)[0])],
  'chat:stop': (args) => [id(argList(args, 1)[0], 'requestId')],
  'summaries:start': (args) => [summarizeRequest(argList(args, 1)[0])],
  'settings:get': none,
  'settings:update': (args) => [settingsPatch(argList(args, 1)[0], 'patch')],
  'settings:kvSnapshots': none,
  'settings:clearKvSnapshots': none,
  'settings:localApi': none,
  'settings:setLocalApi': (args) => [localApiPatch(argList(args, 1)[0])],
  'settings:regenerateApiKey': none,
  'devices:list': none,
  'devices:usage': (args) => [sinceMs(argList(args, 1)[0], 'sinceMs')],
  'devices:placement': none,
  'devices:setPlacement': (args) => [placementSetting(argList(args, 1)[0], 'setting')],
  'devices:providerLibraries': none,
  'devices:addProviderLibrary': (args) => {
    const [name, file, options] = argList(args, 3)
    return [providerName(name, 'name'), path(file, 'path'), providerOptions(options, 'options')]
  },
  'devices:removeProviderLibrary': (args) => [providerName(argList(args, 1)[0], 'name')]
}
