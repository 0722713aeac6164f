/**
 * @file What the app's HTTP host and the OpenAI-compatible API host share: the connection deadlines, listening on
 * one address and learning the port, closing with every open connection (which aborts their generations), and the
 * bearer-token check.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { sendError } from './http-util'

/** Time a client has to send a request's headers, from its first byte (or from connecting). */
export const HEADERS_TIMEOUT_MS = 30_000

/**
 * Time a client has to send a whole request, headers and body, from its first byte. Node's requestTimeout
 * counts only until the request is fully received, never the response, so a reply that streams for minutes
 * is not cut. A local client sends the largest allowed body in well under a second.
 */
export const REQUEST_TIMEOUT_MS = 60_000

/** An idle keep-alive connection (between requests) is closed after this (Node adds its own 1 s margin). */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000

/**
 * How often Node checks the header and request deadlines: they are only enforced by this periodic sweep
 * (Node's default is 30 s, which would let a slow client stay up to that much longer).
 */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000

/** The connection limits; tests pass small values. */
export interface HttpTimeouts {
  readonly headersMs: number
  /** at least headersMs (Node refuses otherwise) */
  readonly requestMs: number
  readonly keepAliveMs: number
  readonly checkIntervalMs: number
}

/** A server listening on one address. */
export interface Listening {
  readonly port: number
  /** Stops listening, ends open connections and resolves when closed (calling it again returns the same promise). */
  close(): Promise<void>
}

/**
 * Serves `handle` on `address:port` (0 picks a free port) with the deadlines above; a handler that throws is
 * answered 500 (or its connection ended) and logged, never crashing the process.
 */
export async function listen(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  options: { readonly address: string; readonly port?: number; readonly timeouts?: Partial<HttpTimeouts>; readonly name: string }
): Promise<Listening> {
  const t: HttpTimeouts = {
    headersMs: HEADERS_TIMEOUT_MS,
    requestMs: REQUEST_TIMEOUT_MS,
    keepAliveMs: KEEP_ALIVE_TIMEOUT_MS,
    checkIntervalMs: TIMEOUT_CHECK_INTERVAL_MS,
    ...options.timeouts
  }
  const server = createServer(
    { headersTimeout: t.headersMs, requestTimeout: t.requestMs, keepAliveTimeout: t.keepAliveMs, connectionsCheckingInterval: t.checkIntervalMs },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        process.stderr.write(`tandem: ${options.name} error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
        if (!res.headersSent) sendError(res, { name: 'InternalError', message: 'Internal error.' })
        else res.destroy()
      })
    }
  )
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.address, () => {
      server.off('error', reject)
      resolvePromise()
    })
  })
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error(`${options.name}: no TCP address after listen`)
  let closing: Promise<void> | null = null
  return {
    port: (address satisfies AddressInfo).port,
    close: () => {
      closing ??= new Promise<void>((resolvePromise) => {
        server.close(() => resolvePromise())
        server.closeAllConnections()
      })
      return closing
    }
  }
}

/** sha256 of a secret, for comparing in constant time. */
export function secretHash(secret: string): Buffer {
  return createHash('sha256').update(secret).digest()
}

/** Constant-time bearer-token check (hashing first makes the lengths equal, as timingSafeEqual needs). */
export function bearerMatches(header: string | undefined, expectedHash: Buffer): boolean {
  const m = /^Bearer ([^\s]+)$/.exec(header ?? '')
  return m !== null && timingSafeEqual(secretHash(m[1]), expectedHash)
}

/** Whether the request announces a body (a length above 0, or chunked): refusing it must then close the connection. */
export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length']
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined
}
