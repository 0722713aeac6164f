/**
 * @file The local OpenAI-compatible API (issue #16): other tools on the laptop talk to Tandem's model the way they
 * talk to OpenAI. `GET /v1/models`, `GET /v1/models/{id}`, `POST /v1/chat/completions` and `POST /v1/completions`,
 * streamed as Server-Sent Events (`data: {chunk}` … `data: [DONE]`) or answered whole, with `usage`; errors in
 * OpenAI's shape. The requests run on the app's model, placement and generation queue (ChatService.complete), so
 * they show in the live device view and wait their turn behind replies.
 *
 * Guards: a bearer key on every request (compared in constant time); the Host header must name this server (a web
 * page cannot reach it through DNS rebinding) and a browser's Origin must be its own; bodies over MAX_BODY_BYTES are
 * refused with 413 before they are read; at most `maxQueue` generations waiting or running (beyond: 429 with
 * Retry-After); a client that disconnects stops its generation. It listens on 127.0.0.1 unless the caller opts in to
 * another address.
 */
import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ModelEntry } from '../../../preload/api'
import type { CompletionJob, CompletionOutcome, LocalApiStarter } from '../../services'
import { jsonNestsDeeperThan, MAX_BODY_BYTES, MAX_JSON_DEPTH, readBody, SECURITY_HEADERS, sendJson } from '../http-util'
import { bearerMatches, hasBody, listen, secretHash, type HttpTimeouts } from '../listen'
import { OpenAiError, sendOpenAiError, toOpenAiError } from './errors'
import { chatCompletionRequest, completionRequest, type ChatCompletionRequest, type CompletionRequest } from './requests'

/** Generations waiting or running beyond which a request is refused with 429. */
export const DEFAULT_MAX_QUEUE = 16
/** What a 429 asks the client to wait (seconds): about one short reply on a laptop. */
export const RETRY_AFTER_SECONDS = 2
/** The loopback addresses: anything else is listening beyond this machine. */
export const LOOPBACK_ADDRESSES: readonly string[] = ['127.0.0.1', '::1', 'localhost']

/** What the API needs of the app. */
export interface OpenAiBackend {
  /** the models the app found (only usable ones are offered) */
  models(): Promise<readonly ModelEntry[]>
  complete(job: CompletionJob, onText: (text: string) => void, signal: AbortSignal): Promise<CompletionOutcome>
  /** generations waiting or running */
  pendingGenerations(): number
}

export interface OpenAiHostOptions {
  readonly backend: OpenAiBackend
  /** the bearer key clients send (default: 32 random bytes, hex) */
  readonly apiKey?: string
  /** 0 (default) picks a free port */
  readonly port?: number
  /** the address to listen on (default 127.0.0.1); anything else is the user's explicit choice */
  readonly address?: string
  readonly maxQueue?: number
  readonly maxBodyBytes?: number
  readonly timeouts?: Partial<HttpTimeouts>
}

export interface OpenAiHost {
  readonly port: number
  /** http://127.0.0.1:PORT/v1 (the address it listens on) */
  readonly baseUrl: string
  readonly apiKey: string
  close(): Promise<void>
}

/**
 * The model names the API offers: usable models by file name, another server's as `<server name>/<its model id>`
 * (the first of equal names wins).
 */
function offered(models: readonly ModelEntry[]): Map<string, ModelEntry> {
  const byName = new Map<string, ModelEntry>()
  for (const m of models) if (m.problem === null && !byName.has(apiName(m))) byName.set(apiName(m), m)
  return byName
}

function apiName(m: ModelEntry): string {
  return m.server === undefined ? m.name : `${m.server}/${m.name}`
}

/**
 * A model as OpenAI lists it, with its context length when known (as vLLM's `max_model_len`; another Tandem reads
 * it). Another server's model is marked `tandem.server`: a Tandem that lists this one (or this one itself, added as
 * a server) leaves those out, so two Tandems pointing at each other do not offer each other's lists back and forth.
 */
function modelObject(m: ModelEntry): { id: string; object: 'model'; created: number; owned_by: string; context_length?: number; tandem?: { server: string } } {
  return {
    id: apiName(m),
    object: 'model',
    created: Math.floor(m.modifiedMs / 1000),
    owned_by: m.server ?? 'tandem',
    ...(m.contextLength !== null && { context_length: m.contextLength }),
    ...(m.server !== undefined && { tandem: { server: m.server } })
  }
}

/** Starts the API; resolves once it listens. */
export async function startOpenAiHost(options: OpenAiHostOptions): Promise<OpenAiHost> {
  const apiKey = options.apiKey ?? randomBytes(32).toString('hex')
  const keyHash = secretHash(apiKey)
  const address = options.address ?? '127.0.0.1'
  const maxQueue = options.maxQueue ?? DEFAULT_MAX_QUEUE
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES
  const { backend } = options
  let port = 0
  // Listening on all interfaces, the Host is whatever address a client used: the key is the guard there.
  const anyHost = address === '0.0.0.0' || address === '::'
  const hostName = address.includes(':') ? `[${address}]` : address
  const allowedHosts = (): string[] => [...new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${hostName}:${port}`])]

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const refuse = (error: OpenAiError, headers: Record<string, string> = {}): void =>
      sendOpenAiError(res, error, hasBody(req) ? { ...headers, Connection: 'close' } : headers)
    const host = req.headers.host ?? ''
    if (!anyHost && !allowedHosts().includes(host)) return refuse(new OpenAiError(403, 'permission_error', `Host "${host.slice(0, 100)}" is not allowed.`))
    const origin = req.headers.origin
    if (origin !== undefined && !allowedHosts().some((h) => origin === `http://${h}`)) {
      return refuse(new OpenAiError(403, 'permission_error', 'Cross-origin requests are not allowed.'))
    }
    if (!bearerMatches(req.headers.authorization, keyHash)) {
      return refuse(new OpenAiError(401, 'authentication_error', 'Missing or wrong API key: send it as "Authorization: Bearer KEY".', null, 'invalid_api_key'), { 'WWW-Authenticate': 'Bearer' })
    }
    const path = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/\/+$/, '')
    if (req.method === 'GET' && path === '/v1/models') {
      return sendJson(res, 200, { object: 'list', data: [...offered(await backend.models()).values()].map(modelObject) })
    }
    if (req.method === 'GET' && path.startsWith('/v1/models/')) {
      const m = offered(await backend.models()).get(decodeURIComponent(path.slice('/v1/models/'.length)))
      if (m === undefined) return refuse(new OpenAiError(404, 'not_found_error', 'No such model.', 'model', 'model_not_found'))
      return sendJson(res, 200, modelObject(m))
    }
    const kind = path === '/v1/chat/completions' ? 'chat' : path === '/v1/completions' ? 'text' : null
    if (kind === null) return refuse(new OpenAiError(404, 'not_found_error', `Unknown endpoint ${req.method ?? ''} ${path.slice(0, 100)}.`))
    if (req.method !== 'POST') return refuse(new OpenAiError(405, 'invalid_request_error', `${path} takes POST.`), { Allow: 'POST' })
    const body = await readBody(req, maxBodyBytes)
    if (!body.ok) {
      if (body.reason === 'too-large') sendOpenAiError(res, new OpenAiError(413, 'invalid_request_error', `The request body is larger than ${maxBodyBytes} bytes.`), { Connection: 'close' })
      return
    }
    if (jsonNestsDeeperThan(body.body, MAX_JSON_DEPTH)) return refuse(new OpenAiError(400, 'invalid_request_error', `The body nests deeper than ${MAX_JSON_DEPTH} levels.`))
    let parsed: unknown
    try {
      parsed = JSON.parse(body.body.toString('utf8'))
    } catch {
      return refuse(new OpenAiError(400, 'invalid_request_error', 'The body is not valid JSON.'))
    }
    let request: ChatCompletionRequest | CompletionRequest
    try {
      request = kind === 'chat' ? chatCompletionRequest(parsed) : completionRequest(parsed)
    } catch (err) {
      return refuse(toOpenAiError(err))
    }
    const model = offered(await backend.models()).get(request.model)
    if (model === undefined) {
      return refuse(new OpenAiError(404, 'not_found_error', `The model "${request.model.slice(0, 200)}" does not exist here; GET /v1/models lists the ones that do.`, 'model', 'model_not_found'))
    }
    if (backend.pendingGenerations() >= maxQueue) {
      return refuse(new OpenAiError(429, 'rate_limit_error', `${maxQueue} requests are already waiting; try again shortly.`), { 'Retry-After': String(RETRY_AFTER_SECONDS) })
    }
    const job: CompletionJob = {
      modelId: model.id,
      input: 'messages' in request ? { messages: request.messages } : { prompt: request.prompt },
      maxTokens: request.maxTokens,
      temperature: request.temperature,
      topP: request.topP,
      seed: request.seed,
      stopStrings: request.stop
    }
    await answer(res, kind, apiName(model), request, job, backend)
  }

  const listening = await listen(handle, { address, port: options.port, timeouts: options.timeouts, name: 'OpenAI-compatible API' })
  port = listening.port
  return { port, baseUrl: `http://${hostName}:${port}/v1`, apiKey, close: listening.close }
}

/** Runs the job and answers it, streamed or whole; a client that goes away stops it. */
async function answer(res: ServerResponse, kind: 'chat' | 'text', model: string, request: ChatCompletionRequest | CompletionRequest, job: CompletionJob, backend: OpenAiBackend): Promise<void> {
  const controller = new AbortController()
  res.on('close', () => {
    if (!res.writableFinished) controller.abort()
  })
  const id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomBytes(12).toString('hex')}`
  const created = Math.floor(Date.now() / 1000)
  const object = kind === 'chat' ? (request.stream ? 'chat.completion.chunk' : 'chat.completion') : 'text_completion'
  const usageOf = (o: CompletionOutcome): { prompt_tokens: number; completion_tokens: number; total_tokens: number } => ({
    prompt_tokens: o.promptTokens,
    completion_tokens: o.completionTokens,
    total_tokens: o.promptTokens + o.completionTokens
  })

  if (!request.stream) {
    let outcome: CompletionOutcome
    try {
      outcome = await backend.complete(job, () => undefined, controller.signal)
    } catch (err) {
      if (!res.destroyed) sendOpenAiError(res, toOpenAiError(err))
      return
    }
    const choice =
      kind === 'chat'
        ? { index: 0, message: { role: 'assistant', content: outcome.text }, finish_reason: outcome.finishReason, logprobs: null }
        : { index: 0, text: outcome.text, finish_reason: outcome.finishReason, logprobs: null }
    if (!res.destroyed) sendJson(res, 200, { id, object, created, model, system_fingerprint: null, choices: [choice], usage: usageOf(outcome) })
    return
  }

  res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', 'X-Accel-Buffering': 'no' })
  const send = (data: unknown): void => {
    if (!res.destroyed && !res.writableEnded) res.write(`data: ${JSON.stringify(data)}\n\n`)
  }
  const chunk = (choice: Record<string, unknown>, finishReason: string | null): unknown => ({
    id,
    object,
    created,
    model,
    system_fingerprint: null,
    choices: [{ index: 0, ...choice, finish_reason: finishReason, logprobs: null }]
  })
  const piece = (text: string): Record<string, unknown> => (kind === 'chat' ? { delta: { content: text } } : { text })
  if (kind === 'chat') send(chunk({ delta: { role: 'assistant', content: '' } }, null))
  try {
    const outcome = await backend.complete(job, (text) => send(chunk(piece(text), null)), controller.signal)
    send(chunk(kind === 'chat' ? { delta: {} } : { text: '' }, outcome.finishReason))
    if (request.includeUsage) send({ id, object, created, model, system_fingerprint: null, choices: [], usage: usageOf(outcome) })
  } catch (err) {
    // after the headers, an error travels as a frame, as OpenAI-compatible servers send it
    send(toOpenAiError(err).body())
  }
  if (!res.destroyed && !res.writableEnded) res.end('data: [DONE]\n\n')
}

/** The starter the app's Local API setting uses (LocalApiService): the entries hand it to createApp. */
export const startLocalApi: LocalApiStarter = (o) => startOpenAiHost({ backend: o.backend, port: o.port, apiKey: o.apiKey, address: o.address })
