/**
 * @file Small HTTP helpers for the host: JSON error replies, the error-name → status table, bounded body
 * reading, the JSON nesting check (main/common/json-depth.ts, re-exported) and the security headers every response
 * carries.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { API_LIMITS, type ApiChannel, type ApiErrorShape } from '../../preload/api'
import { base64Chars } from '../services'

export { jsonNestsDeeperThan } from '../common/json-depth'

/** Largest request body accepted (a 1,000,000-character message JSON-escaped fits with room to spare). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024

/** Room for the JSON around a channel's large argument (a file's name, the request id). */
const BODY_SLACK_BYTES = 64 * 1024

/**
 * Channels whose argument is a file, with the body that carries the largest one: a document to summarize as
 * base64, and a conversations file as a JSON string, where escaping doubles each `"`, `\` and line break at most
 * (characters outside ASCII travel as their own UTF-8 bytes).
 */
const LARGE_BODY_BYTES: Readonly<Partial<Record<ApiChannel, number>>> = Object.freeze({
  'summaries:start': base64Chars(API_LIMITS.maxDocumentBytes) + BODY_SLACK_BYTES,
  'conversations:import': 2 * API_LIMITS.maxImportBytes + BODY_SLACK_BYTES
})

/** The body limit of a channel: `defaultBytes`, or more where a file travels in it (LARGE_BODY_BYTES). */
export function bodyLimitFor(channel: ApiChannel, defaultBytes: number): number {
  return Math.max(defaultBytes, LARGE_BODY_BYTES[channel] ?? 0)
}

/**
 * Deepest nesting of arrays and objects a request body may have. The API's own arguments nest about 5 deep;
 * JSON.parse of 4 million nested brackets (an 8 MiB body) takes seconds on the main thread, so deeper
 * bodies are refused by a linear byte scan before parsing.
 */
export const MAX_JSON_DEPTH = 64

/** Headers on every response, static or API. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin'
})

/** HTTP status for each API error name; names not listed are 500. */
const STATUS_BY_ERROR: Readonly<Record<string, number>> = Object.freeze({
  ValidationError: 400,
  UnknownMethodError: 400,
  InvalidJsonError: 400,
  UnauthorizedError: 401,
  ForbiddenError: 403,
  NotFoundError: 404,
  MethodNotAllowedError: 405,
  BusyError: 409,
  PayloadTooLargeError: 413,
  UnsupportedMediaTypeError: 415,
  NoModelError: 422,
  DocumentError: 422,
  ModelError: 422,
  PlacementError: 422,
  ContextOverflowError: 422,
  DownloadError: 502,
  RemoteError: 502,
  DiskFullError: 507,
  ShutdownError: 503
})

/** The status an API error is answered with. */
export function statusForError(name: string): number {
  return STATUS_BY_ERROR[name] ?? 500
}

/** Sends a JSON body with the security headers and no caching. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-store'
  })
  res.end(text)
}

/** Sends `{ error: { name, message } }` with the status for its name. */
export function sendError(res: ServerResponse, error: ApiErrorShape, headers: Record<string, string> = {}): void {
  sendJson(res, statusForError(error.name), { error: { name: error.name, message: error.message } }, headers)
}

/** Body read result: the bytes, or why there are none. */
export type BodyResult = { readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly reason: 'too-large' | 'aborted' }

/**
 * Reads the request body up to `maxBytes`. A body announced (Content-Length) or found (chunked) to be larger
 * resolves 'too-large' at once, without waiting for the rest: the caller answers 413 and closes the
 * connection, and the bytes that still arrive are discarded until then.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  const announced = Number(req.headers['content-length'] ?? 0)
  if (announced > maxBytes) return Promise.resolve({ ok: false, reason: 'too-large' })
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let received = 0
    req.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received > maxBytes) {
        chunks.length = 0
        resolve({ ok: false, reason: 'too-large' })
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve({ ok: true, body: Buffer.concat(chunks) }))
    req.on('error', () => resolve({ ok: false, reason: 'aborted' }))
    req.on('close', () => resolve({ ok: false, reason: 'aborted' }))
  })
}
