/**
 * @file The bodies of `POST /v1/chat/completions` and `POST /v1/completions`, read without trusting them: types,
 * ranges and sizes are checked (API_LIMITS where the app has one) and every failure is an OpenAiError naming the
 * parameter, as OpenAI's API does. Fields OpenAI clients commonly send that change nothing here (user, metadata,
 * penalties at their neutral values…) are accepted and ignored, so existing tools work; ones that would change the
 * answer in ways this server cannot (n > 1, tools, logprobs) are refused rather than silently dropped.
 */
import { API_LIMITS } from '../../../preload/api'
import { isRecord, readArray, readBoolean, readInteger, readNumber, readText, type JsonRecord } from '../../common/reader'
import type { ChatMessage } from '../../engine'
import { OpenAiError } from './errors'

/** What both endpoints share. */
interface CommonRequest {
  /** the model's name as /v1/models lists it */
  readonly model: string
  readonly maxTokens: number
  readonly temperature: number
  readonly topP: number
  readonly seed: number | null
  readonly stop: readonly string[]
  readonly stream: boolean
  /** stream_options.include_usage: a last chunk with the token counts */
  readonly includeUsage: boolean
}

export interface ChatCompletionRequest extends CommonRequest {
  readonly messages: readonly ChatMessage[]
}

export interface CompletionRequest extends CommonRequest {
  readonly prompt: string
}

/** Most messages in one request (a long conversation has a few hundred). */
export const MAX_MESSAGES = 4096
/** Most stop sequences, as OpenAI allows. */
export const MAX_STOP_SEQUENCES = 4
/** Longest stop sequence (characters). */
export const MAX_STOP_CHARS = 256
/** Tokens of a reply when the request does not say. */
export const DEFAULT_MAX_TOKENS = 512

function fail(param: string, detail: string): never {
  throw new OpenAiError(400, 'invalid_request_error', `${param}: ${detail}`, param)
}

/** Fields that would change the answer in ways this server does not implement: refused, naming the field. */
const UNSUPPORTED: Readonly<Record<string, (value: unknown) => boolean>> = {
  n: (v) => v !== undefined && v !== null && v !== 1,
  tools: (v) => Array.isArray(v) && v.length > 0,
  functions: (v) => Array.isArray(v) && v.length > 0,
  logprobs: (v) => v !== undefined && v !== null && v !== false,
  top_logprobs: (v) => v !== undefined && v !== null && v !== 0,
  best_of: (v) => v !== undefined && v !== null && v !== 1,
  echo: (v) => v === true,
  suffix: (v) => typeof v === 'string' && v !== '',
  response_format: (v) => isRecord(v) && v.type !== 'text',
  frequency_penalty: (v) => v !== undefined && v !== null && v !== 0,
  presence_penalty: (v) => v !== undefined && v !== null && v !== 0,
  logit_bias: (v) => isRecord(v) && Object.keys(v).length > 0
}

function body(value: unknown): JsonRecord {
  if (!isRecord(value)) fail('body', 'expected a JSON object')
  for (const [field, unsupported] of Object.entries(UNSUPPORTED)) {
    if (unsupported(value[field])) throw new OpenAiError(400, 'invalid_request_error', `${field}: not supported by this server`, field)
  }
  return value
}

function optional<T>(value: unknown, read: (v: unknown) => T, otherwise: T): T {
  return value === undefined || value === null ? otherwise : read(value)
}

function common(o: JsonRecord): CommonRequest {
  const model = readText(fail, 'model', o.model, API_LIMITS.maxPathChars)
  if (model.trim() === '') fail('model', 'expected a model name (GET /v1/models lists them)')
  const maxTokens = optional(o.max_completion_tokens ?? o.max_tokens, (v) => readInteger(fail, 'max_tokens', v, 1, API_LIMITS.maxReplyTokens), DEFAULT_MAX_TOKENS)
  const stop = optional(
    o.stop,
    (v) => (typeof v === 'string' ? [v] : readArray(fail, 'stop', v, MAX_STOP_SEQUENCES).map((s, i) => readText(fail, `stop[${i}]`, s, MAX_STOP_CHARS))),
    []
  )
  const streamOptions = optional(o.stream_options, (v) => (isRecord(v) ? v : fail('stream_options', 'expected an object')), {})
  return {
    model,
    maxTokens,
    temperature: optional(o.temperature, (v) => readNumber(fail, 'temperature', v, 0, API_LIMITS.maxTemperature), 1),
    topP: optional(o.top_p, (v) => readNumber(fail, 'top_p', v, Number.MIN_VALUE, 1), 1),
    seed: optional(o.seed, (v) => readInteger(fail, 'seed', v, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER), null),
    stop: stop.filter((s) => s !== ''),
    stream: optional(o.stream, (v) => readBoolean(fail, 'stream', v), false),
    includeUsage: optional(streamOptions.include_usage, (v) => readBoolean(fail, 'stream_options.include_usage', v), false)
  }
}

/** A message's text: a string, or OpenAI's array of content parts of which only text parts are taken. */
function content(value: unknown, param: string): string {
  if (typeof value === 'string') return readText(fail, param, value, API_LIMITS.maxMessageChars)
  const parts = readArray(fail, param, value, MAX_MESSAGES)
  const text = parts
    .map((p, i) => {
      if (!isRecord(p) || p.type !== 'text') fail(`${param}[${i}]`, 'only text content parts are supported')
      return readText(fail, `${param}[${i}].text`, p.text, API_LIMITS.maxMessageChars)
    })
    .join('')
  if (text.length > API_LIMITS.maxMessageChars) fail(param, `more than ${API_LIMITS.maxMessageChars} characters`)
  return text
}

/** A role as the chat template knows it ('developer' is OpenAI's newer name for 'system'). */
function role(value: unknown, param: string): ChatMessage['role'] {
  if (value === 'system' || value === 'developer') return 'system'
  if (value === 'user' || value === 'assistant') return value
  return fail(param, `expected one of system, developer, user, assistant; got ${JSON.stringify(value)?.slice(0, 40)}`)
}

/** The body of POST /v1/chat/completions. */
export function chatCompletionRequest(value: unknown): ChatCompletionRequest {
  const o = body(value)
  const list = readArray(fail, 'messages', o.messages, MAX_MESSAGES, 1)
  const messages = list.map((m, i): ChatMessage => {
    if (!isRecord(m)) fail(`messages[${i}]`, 'expected an object')
    return { role: role(m.role, `messages[${i}].role`), content: m.content === null && m.role === 'assistant' ? '' : content(m.content, `messages[${i}].content`) }
  })
  if (!messages.some((m) => m.role === 'user')) fail('messages', 'at least one user message is needed')
  return { ...common(o), messages }
}

/** The body of POST /v1/completions (one prompt: a string, or an array holding one string). */
export function completionRequest(value: unknown): CompletionRequest {
  const o = body(value)
  const raw = Array.isArray(o.prompt) ? readArray(fail, 'prompt', o.prompt, 1, 1)[0] : o.prompt
  const prompt = readText(fail, 'prompt', raw, API_LIMITS.maxMessageChars)
  if (prompt === '') fail('prompt', 'must not be empty')
  return { ...common(o), prompt }
}
