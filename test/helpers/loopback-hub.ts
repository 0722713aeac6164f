/**
 * @file A Hugging Face–style hub on loopback for download tests: a HEAD (or GET) of `/{repo}/resolve/main/{file}`
 * answers like the real hub (LFS files: a 302 to the CDN with X-Linked-Etag = sha256 and X-Linked-Size; small git
 * files: 200 with ETag = git blob sha1 and Content-Length), and the CDN (`/cdn/{repo}/{file}`) serves the bytes
 * with range requests. `mode` makes the CDN misbehave on purpose for the next requests.
 */
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type ServerResponse } from 'node:http'
import { join } from 'node:path'
import { sharedModel } from './paths'

/** How the CDN answers a GET. */
export type HubMode =
  /** the whole file, or the range asked for */
  | 'ok'
  /** half the bytes, then the connection ends */
  | 'drop-half'
  /** always the whole file with 200, whatever range was asked for */
  | 'ignore-range'
  /** a Content-Length 10 bytes longer than what it sends */
  | 'lie-length'
  /** no Content-Length, and 10 bytes more than the file */
  | 'send-more'
  /** one byte flipped */
  | 'corrupt'
  /** 64 KiB, then nothing more until the client gives up */
  | 'slow'
  /** a download from the start sends half the file, then waits until release() (or the client gives up); a resumed one (a range) is served at once */
  | 'hold'

/** A file the hub holds: LFS files redirect to the CDN, git ones are served at resolve/. */
export interface HubFile {
  readonly data: Buffer
  readonly lfs: boolean
}

export interface LoopbackHub {
  /** http://127.0.0.1:PORT */
  readonly url: string
  mode: HubMode
  /** the Range header of every CDN GET, in order */
  readonly ranges: (string | undefined)[]
  /** lets held transfers go on */
  release(): void
  close(): Promise<void>
}

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
export const gitSha1 = (b: Buffer): string => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex')

/** Bytes sent before a 'slow' transfer stalls. */
export const SLOW_BYTES = 64 * 1024

/**
 * Starts a hub serving `files` (keyed `owner/name/path`) on 127.0.0.1; repositories in `gatedRepos` answer 401.
 * Every request's socket is closed by close().
 */
export async function startLoopbackHub(files: Readonly<Record<string, HubFile>>, gatedRepos: readonly string[] = []): Promise<LoopbackHub> {
  const ranges: (string | undefined)[] = []
  let waiting: (() => void)[] = []
  const hub: { mode: HubMode } = { mode: 'ok' }
  const server = createServer((req, res) => {
    const url = req.url ?? ''
    const resolve = /^\/([\w.-]+\/[\w.-]+)\/resolve\/main\/(.+)$/.exec(url)
    if (resolve !== null) {
      if (gatedRepos.includes(resolve[1])) return res.writeHead(401).end()
      const file = files[`${resolve[1]}/${resolve[2]}`]
      if (file === undefined) return res.writeHead(404).end()
      if (file.lfs) {
        res.writeHead(302, { Location: `/cdn/${resolve[1]}/${resolve[2]}`, 'X-Linked-Etag': `"${sha256(file.data)}"`, 'X-Linked-Size': String(file.data.length) })
        return res.end()
      }
      res.writeHead(200, { ETag: `"${gitSha1(file.data)}"`, 'Content-Length': String(file.data.length) })
      return res.end(req.method === 'HEAD' ? undefined : file.data)
    }
    const cdn = files[url.replace(/^\/cdn\//, '')]
    if (!url.startsWith('/cdn/') || cdn === undefined) return res.writeHead(404).end()
    ranges.push(req.headers.range)
    serveCdn(res, cdn.data, req.headers.range, hub.mode, (go) => waiting.push(go))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the hub has no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    get mode() {
      return hub.mode
    },
    set mode(m: HubMode) {
      hub.mode = m
    },
    ranges,
    release() {
      const go = waiting
      waiting = []
      for (const g of go) g()
    },
    async close() {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    }
  }
}

/** Answers one CDN GET of `whole` as `mode` says; `hold` queues the rest of a held transfer. */
function serveCdn(res: ServerResponse, whole: Buffer, range: string | undefined, mode: HubMode, hold: (go: () => void) => void): void {
  const m = /^bytes=(\d+)-$/.exec(range ?? '')
  const start = m !== null && mode !== 'ignore-range' ? Number(m[1]) : 0
  let body = whole.subarray(start)
  if (mode === 'corrupt') {
    body = Buffer.from(body)
    body[100] ^= 0xff
  }
  const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream' }
  if (mode === 'lie-length') headers['Content-Length'] = String(body.length + 10)
  else if (mode !== 'send-more') headers['Content-Length'] = String(body.length)
  if (start > 0) headers['Content-Range'] = `bytes ${start}-${whole.length - 1}/${whole.length}`
  res.writeHead(start > 0 ? 206 : 200, headers)
  switch (mode) {
    case 'drop-half':
      // half the bytes, then the connection ends (FIN after they are sent: the client reads all of them first)
      res.write(body.subarray(0, body.length >> 1), () => res.socket?.end())
      return
    case 'send-more':
      res.end(Buffer.concat([body, Buffer.alloc(10)]))
      return
    case 'slow':
      res.write(body.subarray(0, SLOW_BYTES))
      return
    case 'hold':
      if (start > 0) break
      res.write(body.subarray(0, body.length >> 1))
      hold(() => {
        if (!res.destroyed) res.end(body.subarray(body.length >> 1))
      })
      return
    default:
      break
  }
  res.end(body)
}

/** The catalog model the app's tests download: the shared stories260K.gguf, served as an LFS file. */
export const TINY_MODEL = {
  id: 'tiny-stories-260k',
  name: 'Tiny Stories 260K',
  repo: 'tandem-test/tiny-stories-GGUF',
  /** the name it is placed under: not the shared model's own, so the two are told apart in the picker */
  fileName: 'tiny-stories-260K.gguf'
} as const

/**
 * A hub serving the tiny model, and a catalog file in `dir` listing it (plus `extra` entries, e.g. one the hub
 * does not have). Close the hub when done.
 */
export async function startTinyModelHub(dir: string, extra: readonly Record<string, unknown>[] = []): Promise<{ hub: LoopbackHub; catalogFile: string; bytes: Buffer }> {
  const bytes = readFileSync(sharedModel('stories260K/stories260K.gguf'))
  const hub = await startLoopbackHub({ [`${TINY_MODEL.repo}/${TINY_MODEL.fileName}`]: { data: bytes, lfs: true } })
  const entry = {
    id: TINY_MODEL.id,
    name: TINY_MODEL.name,
    repo: TINY_MODEL.repo,
    files: [TINY_MODEL.fileName],
    format: 'gguf',
    // as the loader counts them (the GGUF conversion has an untied output head)
    parameters: 292_800,
    quantization: 'F32',
    approxBytes: bytes.length,
    memoryBytes: 16_000_000,
    license: 'MIT'
  }
  const catalogFile = join(dir, 'model-catalog.json')
  writeFileSync(catalogFile, JSON.stringify({ version: 1, models: [entry, ...extra] }))
  return { hub, catalogFile, bytes }
}
