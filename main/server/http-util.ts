/**
 * @file Small HTTP helpers for the host: JSON error replies, the error-name → status table, bounded body
 * reading, the JSON nesting check and the security headers every response carries.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { API_LIMITS, type ApiChannel, type ApiErrorShape } from '../../preload/api'
import { base64Chars } from '../services'

/** Largest request body accepted (a 1,000,000-character message JSON-escaped fits with room to spare). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024

/** Room for the JSON around a file's base64 bytes (its name, the request id). */
const FILE_BODY_SLACK_BYTES = 64 * 1024

/** The body limit of a channel: `defaultBytes`, except where a file travels as base64 (a summary's document). */
export function bodyLimitFor(channel: ApiChannel, defaultBytes: number): number {
  return channel === 'summaries:start' ? Math.max(defaultBytes, base64Chars(API_LIMITS.maxDocumentBytes) + FILE_BODY_SLACK_BYTES) : defaultBytes
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

const OPEN_BRACKET = 0x5b // [
const CLOSE_BRACKET = 0x5d // ]
const OPEN_BRACE = 0x7b // {
const CLOSE_BRACE = 0x7d // }
const QUOTE = 0x22 // "
const BACKSLASH = 0x5c // \

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, by one pass over the UTF-8 bytes that
 * counts brackets outside strings (multi-byte characters never contain these ASCII bytes). Strings are
 * skipped with indexOf (an 8 MiB string costs ~ms, not a byte loop). Malformed text is left for JSON.parse.
 */
export function jsonNestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (b === QUOTE) {
      i = closingQuote(bytes, i + 1)
    } else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
      if (++depth > maxDepth) return true
    } else if (b === CLOSE_BRACKET || b === CLOSE_BRACE) {
      depth--
    }
  }
  return false
}

/** Index of the quote that ends the string starting at `from` (one not escaped by an odd run of backslashes), or the end. */
function closingQuote(bytes: Uint8Array, from: number): number {
  for (let q = bytes.indexOf(QUOTE, from); q !== -1; q = bytes.indexOf(QUOTE, q + 1)) {
    let backslashes = 0
    while (q - 1 - backslashes >= from && bytes[q - 1 - backslashes] === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return q
  }
  return bytes.length
}
