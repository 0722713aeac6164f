/**
 * @file Serving the built renderer (out/renderer) to the browser: GET/HEAD only, paths confined to the
 * folder (no `..`, no symlink escapes), a fixed content-type table, and the same strict Content-Security-
 * Policy the Electron window enforces. The page holds no data, so it is served without the token.
 */
import { createReadStream } from 'node:fs'
import { realpath, stat } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { extname, resolve, sep } from 'node:path'
import { SECURITY_HEADERS, sendError } from './http-util'

/** Policy for the served page: nothing remote, no inline script or style, no framing. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'"
].join('; ')

/** Content types by file extension; anything else is served as opaque bytes. */
const CONTENT_TYPES: Readonly<Record<string, string>> = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8'
})

function notFound(res: ServerResponse): void {
  sendError(res, { name: 'NotFoundError', message: 'Not found.' })
}

/** The file under `root` a URL path names, or null when it would leave `root` or is malformed. */
export function resolveStaticPath(root: string, pathname: string): string | null {
  let decoded: string
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return null
  }
  if (decoded.includes('\u0000') || decoded.includes('\\')) return null
  const relative = decoded === '/' || decoded === '' ? '/index.html' : decoded
  const file = resolve(root, `.${relative}`)
  return file.startsWith(root + sep) ? file : null
}

/** Answers a GET/HEAD for a static file (404 when absent or outside the folder). */
export async function serveStatic(req: IncomingMessage, res: ServerResponse, root: string | null, pathname: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendError(res, { name: 'MethodNotAllowedError', message: 'Only GET and HEAD are allowed here.' }, { Allow: 'GET, HEAD' })
    return
  }
  if (root === null) return notFound(res)
  const rootReal = await realpath(root).catch(() => null)
  const candidate = rootReal === null ? null : resolveStaticPath(rootReal, pathname)
  if (rootReal === null || candidate === null) return notFound(res)
  // realpath resolves symlinks, so a link inside the folder cannot point outside it.
  const file = await realpath(candidate).catch(() => null)
  if (file === null || !file.startsWith(rootReal + sep)) return notFound(res)
  const info = await stat(file).catch(() => null)
  if (info === null || !info.isFile()) return notFound(res)
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'Content-Type': CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': String(info.size),
    // Built asset names carry content hashes, but index.html does not: revalidate everything (local, cheap).
    'Cache-Control': 'no-cache'
  })
  if (req.method === 'HEAD') {
    res.end()
    return
  }
  const stream = createReadStream(file)
  stream.on('error', () => res.destroy())
  stream.pipe(res)
}
