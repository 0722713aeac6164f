/**
 * @file The API over HTTP for browser mode and tests, bound to 127.0.0.1 only.
 * - Every request: the Host header must be 127.0.0.1:PORT or localhost:PORT (DNS-rebinding guard), and an
 *   Origin, when sent, must be that same origin; otherwise 403.
 * - `POST /api/<service>/<method>` with `Authorization: Bearer <token>` (a random per-launch token, compared in
 *   constant time) and a JSON body `{ "args": [...] }`. Calls answer `{ "result": ... }`; errors answer
 *   `{ "error": { name, message } }` with a 4xx/5xx status. Stream methods answer `text/event-stream`:
 *   `event: chat` per streamed event, then one `event: result` or `event: error`. A stream that fails before
 *   its first event answers a plain JSON error instead. Closing the connection aborts the generation.
 * - Anything else: the built renderer as static files (no token needed: the page holds no data).
 * - Limits: a request must send its headers within HEADERS_TIMEOUT_MS and its whole body within
 *   REQUEST_TIMEOUT_MS (else 408 and the connection closes); an idle keep-alive connection closes after
 *   KEEP_ALIVE_TIMEOUT_MS. A body over MAX_BODY_BYTES is answered 413 at once (announced or found while
 *   reading) and the connection closes; JSON nested deeper than MAX_JSON_DEPTH is refused before parsing.
 */
import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { resolve } from 'node:path'
import { API_METHODS, type ApiErrorShape } from '../../preload/api'
import { isApiChannel, type ApiDispatch } from '../services'
import { bodyLimitFor, jsonNestsDeeperThan, MAX_BODY_BYTES, MAX_JSON_DEPTH, readBody, SECURITY_HEADERS, sendError, sendJson } from './http-util'
import { serveStatic } from './static-files'
import { bearerMatches, hasBody, listen, secretHash, type HttpTimeouts } from './listen'

export { HEADERS_TIMEOUT_MS, KEEP_ALIVE_TIMEOUT_MS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS, type HttpTimeouts } from './listen'

/** The only interface the host listens on. */
export const HOST_ADDRESS = '127.0.0.1'

/** Options for startHttpHost. */
export interface HttpHostOptions {
  readonly dispatch: ApiDispatch
  /** 0 (default) picks a free port */
  readonly port?: number
  /** folder of the built renderer; null serves no page (API only) */
  readonly staticDir?: string | null
  /** per-launch secret (default: 32 random bytes, hex); tests may pass their own */
  readonly token?: string
  readonly maxBodyBytes?: number
  /** default: the *_TIMEOUT_MS constants above */
  readonly timeouts?: Partial<HttpTimeouts>
}

/** A running host; close() when done. */
export interface HttpHost {
  readonly port: number
  /** http://127.0.0.1:PORT */
  readonly origin: string
  readonly token: string
  /** the page URL with the token, what the user opens: http://127.0.0.1:PORT/?token=… */
  readonly launchUrl: string
  /** Stops listening, ends open connections (aborting their generations) and resolves when closed. */
  close(): Promise<void>
}

/** Starts listening on 127.0.0.1 and resolves once the port is known. */
export async function startHttpHost(options: HttpHostOptions): Promise<HttpHost> {
  const token = options.token ?? randomBytes(32).toString('hex')
  const tokenHash = secretHash(token)
  const staticDir = options.staticDir == null ? null : resolve(options.staticDir)
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES
  let port = 0
  const allowedHosts = (): string[] => [`${HOST_ADDRESS}:${port}`, `localhost:${port}`]

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // Refused before its body is read: Node would otherwise read and discard the body to keep the connection,
    // for as long as the sender takes (up to the request timeout); closing skips it.
    const refuse = (error: ApiErrorShape, headers: Record<string, string> = {}): void =>
      sendError(res, error, hasBody(req) ? { ...headers, Connection: 'close' } : headers)
    const host = req.headers.host ?? ''
    if (!allowedHosts().includes(host)) {
      return refuse({ name: 'ForbiddenError', message: `Host "${host.slice(0, 100)}" is not allowed.` })
    }
    const origin = req.headers.origin
    if (origin !== undefined && !allowedHosts().some((h) => origin === `http://${h}`)) {
      return refuse({ name: 'ForbiddenError', message: 'Cross-origin requests are not allowed.' })
    }
    const url = new URL(req.url ?? '/', `http://${host}`)
    if (url.pathname !== '/api' && !url.pathname.startsWith('/api/')) return serveStatic(req, res, staticDir, url.pathname)
    if (req.method !== 'POST') {
      return refuse({ name: 'MethodNotAllowedError', message: 'API calls use POST.' }, { Allow: 'POST' })
    }
    if (!bearerMatches(req.headers.authorization, tokenHash)) {
      return refuse({ name: 'UnauthorizedError', message: 'Missing or wrong token.' }, { 'WWW-Authenticate': 'Bearer' })
    }
    const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()
    if (contentType !== 'application/json') {
      return refuse({ name: 'UnsupportedMediaTypeError', message: 'Send the arguments as application/json.' })
    }
    const m = /^\/api\/([A-Za-z]+)\/([A-Za-z]+)$/.exec(url.pathname)
    const channel = m === null ? '' : `${m[1]}:${m[2]}`
    if (!isApiChannel(channel)) {
      return refuse({ name: 'UnknownMethodError', message: `Unknown API method ${url.pathname.slice(0, 100)}.` })
    }
    const limit = bodyLimitFor(channel, maxBodyBytes)
    const body = await readBody(req, limit)
    if (!body.ok) {
      // the rest of the body is not read: closing the connection after the 413 is the only way to skip it
      if (body.reason === 'too-large') {
        sendError(res, { name: 'PayloadTooLargeError', message: `The request body is larger than ${limit} bytes.` }, { Connection: 'close' })
      }
      return
    }
    if (jsonNestsDeeperThan(body.body, MAX_JSON_DEPTH)) {
      return sendError(res, { name: 'ValidationError', message: `The body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels.` })
    }
    let args: unknown
    try {
      const parsed: unknown = JSON.parse(body.body.toString('utf8'))
      if (typeof parsed !== 'object' || parsed === null || !('args' in parsed) || !Array.isArray(parsed.args)) {
        return sendError(res, { name: 'ValidationError', message: 'The body must be a JSON object {"args": [...]}.' })
      }
      args = parsed.args
    } catch {
      return sendError(res, { name: 'InvalidJsonError', message: 'The body is not valid JSON.' })
    }
    if (API_METHODS[channel] === 'stream') return stream(res, channel, args, options.dispatch)
    const outcome = await options.dispatch(channel, args, { emit: () => undefined, signal: new AbortController().signal })
    if (outcome.ok) sendJson(res, 200, { result: outcome.result })
    else sendError(res, outcome.error)
  }

  const listening = await listen(handle, { address: HOST_ADDRESS, port: options.port, timeouts: options.timeouts, name: 'HTTP host' })
  port = listening.port
  const origin = `http://${HOST_ADDRESS}:${port}`
  return { port, origin, token, launchUrl: `${origin}/?token=${token}`, close: listening.close }
}

/** One SSE frame; JSON text never contains a raw newline, so one data line suffices. */
function sseFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

/** Runs a stream method, answering with Server-Sent Events (or a JSON error if it fails before any event). */
async function stream(res: ServerResponse, channel: string, args: unknown, dispatch: ApiDispatch): Promise<void> {
  const controller = new AbortController()
  // 'close' on the response fires when it finished or when the client went away; only the latter aborts.
  res.on('close', () => {
    if (!res.writableFinished) controller.abort()
  })
  const open = (): void => {
    if (res.headersSent) return
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no'
    })
  }
  const emit = (event: unknown): void => {
    if (res.destroyed || res.writableEnded) return
    open()
    res.write(sseFrame('chat', event))
  }
  const outcome = await dispatch(channel, args, { emit, signal: controller.signal })
  if (res.destroyed || res.writableEnded) return
  if (!res.headersSent && !outcome.ok) return sendError(res, outcome.error)
  open()
  res.end(outcome.ok ? sseFrame('result', outcome.result) : sseFrame('error', { name: outcome.error.name, message: outcome.error.message }))
}
