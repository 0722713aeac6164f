/**
 * @file Another server as a backend (issue #16): a vendor's local server that reaches an NPU (Lemonade, FastFlowLM,
 * Foundry Local), or a bigger machine running vLLM, llama.cpp's server or Ollama, spoken to through the OpenAI API
 * shape. Plain HTTP only to this machine (the key and the conversation would otherwise cross the network in clear);
 * HTTPS to anything else. Every failure is a RemoteError saying what happened: unreachable, refused key, an error
 * the server sent (its own message), a stream that stalls (no byte for `stallMs`) or ends without its last frame.
 */
import { isRecord } from '../../common/reader'

/** A server the user added: where, with which key. */
export interface RemoteServer {
  /** base URL ending in /v1 (e.g. http://127.0.0.1:8000/v1) */
  readonly baseUrl: string
  readonly apiKey: string | null
}

/** One chat request to a server. */
export interface RemoteChatRequest {
  readonly model: string
  readonly messages: readonly { readonly role: 'system' | 'user' | 'assistant'; readonly content: string }[]
  readonly maxTokens: number
  readonly temperature: number
  readonly topP: number
  readonly seed: number | null
  readonly stop: readonly string[]
}

/** What the server reported at the end. */
export interface RemoteChatResult {
  readonly text: string
  readonly finishReason: string | null
  /** the server's token counts, when it sent them */
  readonly usage: { readonly promptTokens: number; readonly completionTokens: number } | null
}

export interface RemoteOptions {
  readonly signal?: AbortSignal
  /** longest wait for the next byte of an answer (ms) */
  readonly stallMs?: number
  readonly fetch?: typeof fetch
}

/** A request to another server that did not work, with a message for people. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError'
}

/** Longest wait for a server's next byte before the request is given up. */
export const DEFAULT_STALL_MS = 60_000
/** Largest SSE line or JSON answer taken from a server (characters): a runaway answer stops here. */
export const MAX_REMOTE_LINE_CHARS = 4 * 1024 * 1024

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]'])

/** The server's base URL, checked: http(s), no credentials in it, plain HTTP only to this machine. */
export function checkServerUrl(text: string): URL {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new RemoteError(`"${text.slice(0, 200)}" is not a URL.`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RemoteError('The server URL must start with https:// (or http:// for a server on this machine).')
  if (url.username !== '' || url.password !== '') throw new RemoteError('Put the key in the key field, not in the URL.')
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw new RemoteError(`Plain HTTP is only used for servers on this machine; ${url.hostname} needs https:// (the key and your conversations would cross the network unencrypted).`)
  }
  return url
}

/** "0.3 s", "60 s". */
function seconds(ms: number): string {
  return `${ms < 10_000 ? (ms / 1000).toFixed(1).replace(/\.0$/, '') : Math.round(ms / 1000)} s`
}

function endpoint(server: RemoteServer, path: string): string {
  return `${checkServerUrl(server.baseUrl).href.replace(/\/+$/, '')}${path}`
}

function headers(server: RemoteServer): Record<string, string> {
  return { 'Content-Type': 'application/json', ...(server.apiKey !== null && { Authorization: `Bearer ${server.apiKey}` }) }
}

/** The message of an OpenAI-shaped error body, or the status. */
async function failure(response: Response, host: string): Promise<RemoteError> {
  let detail = ''
  try {
    const body: unknown = JSON.parse((await response.text()).slice(0, 64 * 1024))
    if (isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string') detail = body.error.message.slice(0, 500)
  } catch {
    // not JSON: the status says enough
  }
  if (response.status === 401 || response.status === 403) return new RemoteError(`${host} refused the key (HTTP ${response.status})${detail === '' ? '' : `: ${detail}`}.`)
  return new RemoteError(`${host} answered HTTP ${response.status}${detail === '' ? '' : `: ${detail}`}.`)
}

/** A signal that aborts with `outer`, or when `arm()` is not called again within `ms` (a stalled server). */
function stallGuard(outer: AbortSignal | undefined, ms: number): { signal: AbortSignal; arm: () => void; stalled: () => boolean; done: () => void } {
  const controller = new AbortController()
  let stalled = false
  let timer: NodeJS.Timeout | undefined
  const onOuter = (): void => controller.abort(outer?.reason)
  outer?.addEventListener('abort', onOuter, { once: true })
  if (outer?.aborted) controller.abort(outer.reason)
  const arm = (): void => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      stalled = true
      controller.abort()
    }, ms)
  }
  arm()
  return {
    signal: controller.signal,
    arm,
    stalled: () => stalled,
    done: () => {
      clearTimeout(timer)
      outer?.removeEventListener('abort', onOuter)
    }
  }
}

async function request(server: RemoteServer, path: string, init: RequestInit, options: RemoteOptions, guard: ReturnType<typeof stallGuard>): Promise<Response> {
  const host = new URL(endpoint(server, '')).host
  try {
    const response = await (options.fetch ?? fetch)(endpoint(server, path), { ...init, headers: headers(server), signal: guard.signal })
    guard.arm()
    if (!response.ok) throw await failure(response, host)
    return response
  } catch (err) {
    if (err instanceof RemoteError) throw err
    options.signal?.throwIfAborted()
    if (guard.stalled()) throw new RemoteError(`${host} did not answer within ${seconds(options.stallMs ?? DEFAULT_STALL_MS)}.`)
    throw new RemoteError(`Could not reach ${host}: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}.`, { cause: err })
  }
}

/** A model a server offers: its id, and its context length when the server says (vLLM, llama.cpp's server, LM Studio). */
export interface RemoteModelInfo {
  readonly id: string
  readonly contextLength: number | null
}

/** The context length a /models entry states, under the names servers use for it; null when none does. */
function statedContext(m: Record<string, unknown>): number | null {
  const meta = isRecord(m.meta) ? m.meta : {}
  for (const v of [m.max_model_len, m.context_length, m.max_context_length, meta.n_ctx, meta.n_ctx_train]) {
    if (typeof v === 'number' && Number.isSafeInteger(v) && v > 0) return v
  }
  return null
}

/** Most models one server's list is read for (a runaway list is cut here). */
export const MAX_REMOTE_MODELS = 500

/** The models the server offers (GET /models). */
export async function listRemoteModels(server: RemoteServer, options: RemoteOptions = {}): Promise<RemoteModelInfo[]> {
  const guard = stallGuard(options.signal, options.stallMs ?? DEFAULT_STALL_MS)
  try {
    const response = await request(server, '/models', { method: 'GET' }, options, guard)
    const text = await response.text()
    if (text.length > MAX_REMOTE_LINE_CHARS) throw new RemoteError('The server sent a model list larger than any real one.')
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new RemoteError('The server did not answer /models with JSON: is the URL its OpenAI-compatible base (ending in /v1)?')
    }
    if (!isRecord(body) || !Array.isArray(body.data)) throw new RemoteError('The server answered /models without a list of models.')
    // a model another Tandem offers from a server of its own (`tandem.server`) is left out: that Tandem, or this one
    // added as a server of itself, would otherwise offer it back one level deeper each time the lists are read
    return body.data
      .slice(0, MAX_REMOTE_MODELS)
      .flatMap((m: unknown) => (isRecord(m) && typeof m.id === 'string' && m.id !== '' && !isRecord(m.tandem) ? [{ id: m.id.slice(0, 500), contextLength: statedContext(m) }] : []))
  } finally {
    guard.done()
  }
}

/** One text completion (POST /completions): a plain prompt continued. */
export interface RemoteTextRequest extends Omit<RemoteChatRequest, 'messages'> {
  readonly prompt: string
}

/**
 * Streams a chat completion from the server: `onText` gets each piece; resolves with the whole text, the finish
 * reason and the usage the server reported. A stream that ends without `data: [DONE]` (or a finish reason) is a
 * dropped connection, reported with how far it got (the caller has seen the text so far through onText).
 */
export function streamRemoteChat(server: RemoteServer, chat: RemoteChatRequest, onText: (text: string) => void, options: RemoteOptions = {}): Promise<RemoteChatResult> {
  return streamRemote(server, '/chat/completions', { messages: chat.messages }, chat, (choice) => (isRecord(choice.delta) ? choice.delta.content : undefined), onText, options)
}

/** Streams a text completion from the server (see streamRemoteChat). */
export function streamRemoteText(server: RemoteServer, completion: RemoteTextRequest, onText: (text: string) => void, options: RemoteOptions = {}): Promise<RemoteChatResult> {
  return streamRemote(server, '/completions', { prompt: completion.prompt }, completion, (choice) => choice.text, onText, options)
}

/** The streamed request both completions make; `pieceOf` finds the new text in a choice. */
async function streamRemote(
  server: RemoteServer,
  path: string,
  input: Record<string, unknown>,
  params: Omit<RemoteChatRequest, 'messages'>,
  pieceOf: (choice: Record<string, unknown>) => unknown,
  onText: (text: string) => void,
  options: RemoteOptions
): Promise<RemoteChatResult> {
  const guard = stallGuard(options.signal, options.stallMs ?? DEFAULT_STALL_MS)
  const host = new URL(endpoint(server, '')).host
  const body = JSON.stringify({
    model: params.model,
    ...input,
    max_tokens: params.maxTokens,
    temperature: params.temperature,
    top_p: params.topP,
    ...(params.seed !== null && { seed: params.seed }),
    ...(params.stop.length > 0 && { stop: params.stop }),
    stream: true,
    stream_options: { include_usage: true }
  })
  let text = ''
  let finishReason: string | null = null
  let usage: RemoteChatResult['usage'] = null
  let ended = false
  try {
    const response = await request(server, path, { method: 'POST', body }, options, guard)
    if (response.body === null) throw new RemoteError(`${host} sent no content.`)
    const decoder = new TextDecoder()
    let buffer = ''
    const take = (line: string): void => {
      if (!line.startsWith('data:')) return
      const data = line.slice(5).trim()
      if (data === '[DONE]') {
        ended = true
        return
      }
      let frame: unknown
      try {
        frame = JSON.parse(data)
      } catch {
        throw new RemoteError(`${host} sent a malformed stream frame.`)
      }
      if (!isRecord(frame)) return
      if (isRecord(frame.error)) throw new RemoteError(`${host} stopped with an error: ${typeof frame.error.message === 'string' ? frame.error.message.slice(0, 500) : 'no message'}.`)
      if (isRecord(frame.usage) && isCount(frame.usage.prompt_tokens) && isCount(frame.usage.completion_tokens)) {
        usage = { promptTokens: frame.usage.prompt_tokens, completionTokens: frame.usage.completion_tokens }
      }
      const choice: unknown = Array.isArray(frame.choices) ? frame.choices[0] : undefined
      if (!isRecord(choice)) return
      const piece = pieceOf(choice)
      if (typeof piece === 'string' && piece !== '') {
        text += piece
        onText(piece)
      }
      if (typeof choice.finish_reason === 'string') finishReason = choice.finish_reason
    }
    for await (const chunk of response.body) {
      guard.arm()
      buffer += decoder.decode(chunk, { stream: true })
      const lines = buffer.split(/\r?\n/)
      buffer = lines.pop() ?? ''
      if (buffer.length > MAX_REMOTE_LINE_CHARS) throw new RemoteError(`${host} sent a stream line larger than any real one.`)
      for (const line of lines) take(line)
    }
    take(buffer)
  } catch (err) {
    if (err instanceof RemoteError) throw err
    options.signal?.throwIfAborted()
    if (guard.stalled()) throw new RemoteError(`${host} stopped sending for ${seconds(options.stallMs ?? DEFAULT_STALL_MS)} after ${text.length} characters; the reply was cut there.`)
    throw new RemoteError(`The connection to ${host} dropped after ${text.length} characters: ${err instanceof Error ? err.message : String(err)}.`, { cause: err })
  } finally {
    guard.done()
  }
  if (!ended && finishReason === null) throw new RemoteError(`The connection to ${host} dropped after ${text.length} characters (the stream ended without its last frame).`)
  return { text, finishReason, usage }
}

/** A token count as a server reports it. */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}
