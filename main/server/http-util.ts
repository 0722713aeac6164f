/**
 * @file Small HTTP helpers for the host: JSON error replies, the error-name → status table, bounded body
 * reading and the security headers every response carries.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ApiErrorShape } from '../../preload/api'

/** Largest request body accepted (a 1,000,000-character message JSON-escaped fits with room to spare). */
export const MAX_BODY_BYTES = 8 * 1024 * 1024

/** How much of an oversized body is read and discarded so the client sees the 413 before the socket closes. */
const MAX_DRAIN_BYTES = 4 * MAX_BODY_BYTES

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

/** Body read result: the bytes, or 'too-large' once the limit was passed (the rest was discarded). */
export type BodyResult = { readonly ok: true; readonly body: Buffer } | { readonly ok: false; readonly reason: 'too-large' | 'aborted' }

/** Reads the request body up to `maxBytes`; past it, drains (bounded) so the error reply can be read. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let received = 0
    let tooLarge = false
    req.on('data', (chunk: Buffer) => {
      received += chunk.length
      if (received > maxBytes) {
        tooLarge = true
        chunks.length = 0
        if (received > MAX_DRAIN_BYTES) {
          req.destroy()
          resolve({ ok: false, reason: 'too-large' })
        }
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(tooLarge ? { ok: false, reason: 'too-large' } : { ok: true, body: Buffer.concat(chunks) }))
    req.on('error', () => resolve({ ok: false, reason: 'aborted' }))
    req.on('close', () => resolve({ ok: false, reason: tooLarge ? 'too-large' : 'aborted' }))
  })
}
