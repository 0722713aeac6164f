/**
 * The HTTP host's connection limits with raw sockets: slow-drip headers, an unfinished body and idle
 * connections are closed by (injected, small) deadlines while a reply streaming longer than all of them is
 * not cut; every oversized body gets a 413 the client can read; deeply nested JSON is refused before parsing.
 * Verdicts come from events (the socket closed, the status read), never from how long something took; the
 * test timeouts only stop a hang.
 */
import { connect, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonNestsDeeperThan, MAX_BODY_BYTES, MAX_JSON_DEPTH, startHttpHost, type HttpHost, type HttpTimeouts } from '../../main/server'
import { appFixture, type AppFixture } from '../services/app-fixture'

/** Small deadlines for the timeout tests; the check interval is what makes them hold at all (see http-host). */
const SHORT: HttpTimeouts = { headersMs: 400, requestMs: 800, keepAliveMs: 200, checkIntervalMs: 50 }

/** Opens while the test holds replies mid-stream: the pace every token after the first waits for. */
let openGate: () => void = () => undefined
const gate = new Promise<void>((resolve) => (openGate = resolve))

let f: AppFixture
/** the SHORT deadlines */
let quick: HttpHost
/** the default deadlines (body tests whose verdict must not depend on a deadline) */
let normal: HttpHost

beforeAll(async () => {
  f = appFixture({
    pace: (signal) =>
      new Promise<void>((resolve) => {
        const done = (): void => {
          signal.removeEventListener('abort', done)
          resolve()
        }
        signal.addEventListener('abort', done, { once: true })
        void gate.then(done)
      })
  })
  quick = await startHttpHost({ dispatch: f.app.dispatch, staticDir: null, timeouts: SHORT })
  normal = await startHttpHost({ dispatch: f.app.dispatch, staticDir: null })
})
afterAll(async () => {
  openGate()
  await quick.close()
  await normal.close()
  await f.dispose()
})

/** A raw connection: what it received, and a promise of its close. */
interface Raw {
  readonly socket: Socket
  text(): string
  readonly closed: Promise<void>
}

function rawConnect(host: HttpHost): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(host.port, '127.0.0.1')
    let received = ''
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')))
    // writes racing the server's close may fail; what was received is the verdict
    socket.on('error', () => undefined)
    const closed = new Promise<void>((r) => socket.once('close', () => r()))
    socket.once('connect', () => resolve({ socket, text: () => received, closed }))
    socket.once('error', reject)
  })
}

const headers = (host: HttpHost, path: string, extra: string): string =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${host.port}\r\nAuthorization: Bearer ${host.token}\r\nContent-Type: application/json\r\n${extra}\r\n`

/** The status line's code of a raw HTTP response (0 when nothing came). */
const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)

/** Waits until `text()` matches, polling on the event loop (bounded by the test's timeout). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 10))
}

describe('deadlines', () => {
  it('closes a connection that drips its headers a byte at a time (408)', async () => {
    const c = await rawConnect(quick)
    c.socket.write(`POST /api/app/version HTTP/1.1\r\nHost: 127.0.0.1:${quick.port}\r\nX-Drip: `)
    // each byte comes well within any inactivity limit; only the deadline for the whole header can stop it
    let dripped = 0
    const drip = setInterval(() => {
      if (!c.socket.destroyed) c.socket.write('a', () => dripped++)
    }, SHORT.headersMs / 8)
    await c.closed
    clearInterval(drip)
    expect(dripped).toBeGreaterThan(0)
    expect([0, 408]).toContain(statusOf(c.text()))
  }, 20_000)

  it('closes a connection that never sends anything', async () => {
    const c = await rawConnect(quick)
    await c.closed
    expect(c.text()).not.toMatch(/^HTTP\/1\.1 2/)
  }, 20_000)

  it('closes an authorized request whose body never completes (408)', async () => {
    const c = await rawConnect(quick)
    c.socket.write(headers(quick, '/api/app/version', 'Content-Length: 100\r\n') + '{"args":')
    await c.closed
    expect([0, 408]).toContain(statusOf(c.text()))
    expect(c.text()).not.toContain('"result"')
  }, 20_000)

  it('closes an idle keep-alive connection after its reply', async () => {
    const c = await rawConnect(quick)
    const body = '{"args":[]}'
    c.socket.write(headers(quick, '/api/app/version', `Content-Length: ${body.length}\r\n`) + body)
    await c.closed
    expect(statusOf(c.text())).toBe(200)
    expect(c.text()).toContain('"result":"9.9.9-test"')
  }, 20_000)

  it('does not cut a reply that streams longer than every deadline', async () => {
    const conversation = await f.conversation(12)
    const stream = await rawConnect(quick)
    const body = JSON.stringify({ args: [{ requestId: 'limits-1', conversationId: conversation.id, content: 'Once upon a time' }] })
    stream.socket.write(headers(quick, '/api/chat/send', `Content-Length: ${Buffer.byteLength(body)}\r\n`) + body)
    // the first token is out; the rest waits for the gate
    await until(() => stream.text().includes('"type":"delta"'))
    let streamClosed = false
    void stream.closed.then(() => (streamClosed = true))
    // these connections, opened after the stream's, are closed by the body and idle deadlines: by then the
    // stream's own request is older than both
    const unfinished = await rawConnect(quick)
    unfinished.socket.write(headers(quick, '/api/app/version', 'Content-Length: 100\r\n'))
    const idle = await rawConnect(quick)
    idle.socket.write(headers(quick, '/api/app/version', 'Content-Length: 11\r\n') + '{"args":[]}')
    await Promise.all([unfinished.closed, idle.closed])
    expect(streamClosed).toBe(false)
    openGate()
    await until(() => stream.text().includes('event: result') || streamClosed)
    expect(statusOf(stream.text())).toBe(200)
    expect(stream.text()).toMatch(/event: result\ndata: \{[^\n]*"status":"complete"/)
    stream.socket.destroy()
  }, 60_000)
})

describe('oversized bodies', () => {
  it('answers a 40 MiB body announced by Content-Length with a 413 the client reads', async () => {
    const c = await rawConnect(normal)
    const size = 40 * 1024 * 1024
    c.socket.write(headers(normal, '/api/conversations/search', `Content-Length: ${size}\r\n`))
    c.socket.write(Buffer.alloc(size, 0x61))
    await c.closed
    expect(statusOf(c.text())).toBe(413)
    expect(c.text()).toContain('PayloadTooLargeError')
    expect(c.text()).toMatch(/\r\nConnection: close\r\n/i)
  }, 60_000)

  it('answers a chunked body that never ends with a 413 once past the limit, then closes', async () => {
    const c = await rawConnect(normal)
    c.socket.write(headers(normal, '/api/conversations/search', 'Transfer-Encoding: chunked\r\n'))
    const chunk = Buffer.concat([Buffer.from(`${(1024 * 1024).toString(16)}\r\n`), Buffer.alloc(1024 * 1024, 0x61), Buffer.from('\r\n')])
    // keeps sending until the server closes (a cap of 10× the limit stops a server that never answers)
    let sent = 0
    const pump = (): void => {
      while (!c.socket.destroyed && sent < 10 * MAX_BODY_BYTES) {
        sent += chunk.length
        if (!c.socket.write(chunk)) return void c.socket.once('drain', pump)
      }
    }
    pump()
    await c.closed
    expect(statusOf(c.text())).toBe(413)
    expect(c.text()).toContain('PayloadTooLargeError')
    expect(sent).toBeLessThan(10 * MAX_BODY_BYTES)
  }, 60_000)

  it('answers a body just over the limit with 413 over fetch, and the host goes on', async () => {
    const response = await fetch(`${normal.origin}/api/conversations/search`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${normal.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ args: ['x'.repeat(MAX_BODY_BYTES)] })
    })
    expect(response.status).toBe(413)
    expect(await version(normal)).toBe('9.9.9-test')
  }, 60_000)
})

async function version(host: HttpHost): Promise<unknown> {
  const response = await fetch(`${host.origin}/api/app/version`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${host.token}`, 'Content-Type': 'application/json' },
    body: '{"args":[]}'
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { result: unknown }).result
}

describe('refused before the body', () => {
  it('closes the connection after a 401 to a request announcing a body, instead of reading what the sender drips', async () => {
    // the default deadlines: only the close after the answer can end this connection within the test
    const c = await rawConnect(normal)
    const wrongToken = `POST /api/app/version HTTP/1.1\r\nHost: 127.0.0.1:${normal.port}\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`
    c.socket.write(wrongToken + '{"args":')
    await c.closed
    expect(statusOf(c.text())).toBe(401)
    expect(c.text()).toMatch(/\r\nConnection: close\r\n/i)
  }, 20_000)
})

describe('JSON nesting', () => {
  it('refuses 8 MB of nested brackets with 400 before parsing, and answers the next call', async () => {
    const depth = (MAX_BODY_BYTES - 64) / 2
    const body = `{"args":[${'['.repeat(depth)}${']'.repeat(depth)}]}`
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_BODY_BYTES)
    const response = await fetch(`${normal.origin}/api/conversations/search`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${normal.token}`, 'Content-Type': 'application/json' },
      body
    })
    expect(response.status).toBe(400)
    const error = ((await response.json()) as { error: { name: string; message: string } }).error
    expect(error.name).toBe('ValidationError')
    expect(error.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`)
    expect(await version(normal)).toBe('9.9.9-test')
  }, 60_000)

  it('counts brackets outside strings only, up to the limit inclusive', () => {
    const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n)
    const bytes = (s: string): Buffer => Buffer.from(s, 'utf8')
    expect(jsonNestsDeeperThan(bytes(nested(MAX_JSON_DEPTH)), MAX_JSON_DEPTH)).toBe(false)
    expect(jsonNestsDeeperThan(bytes(nested(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH)).toBe(true)
    expect(jsonNestsDeeperThan(bytes(`{"a":${nested(2)},"b":{"c":[1,2]}}`), 3)).toBe(false)
    expect(jsonNestsDeeperThan(bytes(`{"a":{"b":{"c":{}}}}`), 3)).toBe(true)
    // brackets, escaped quotes and backslashes inside strings do not count
    expect(jsonNestsDeeperThan(bytes(JSON.stringify({ args: ['[[[[{{{{', 'a\\"[[[[', '\\', '"[[[[', 'é[[[['] })), 2)).toBe(false)
    expect(jsonNestsDeeperThan(bytes(JSON.stringify({ args: ['\\', [[1]]] })), 3)).toBe(true)
  })

  it('agrees with the real depth of random JSON full of brackets, quotes and backslashes in strings', () => {
    let seed = 7
    const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n)
    const pieces = ['[', ']', '{', '}', '"', '\\', 'a', 'é', '😀', ' ']
    const text = (): string => Array.from({ length: random(8) }, () => pieces[random(pieces.length)]).join('')
    const value = (depthLeft: number): unknown => {
      const kind = depthLeft === 0 ? 0 : random(4)
      if (kind === 0) return text()
      if (kind === 1) return random(2) === 0 ? 1 : null
      if (kind === 2) return Array.from({ length: random(3) }, () => value(depthLeft - 1))
      return Object.fromEntries(Array.from({ length: random(3) }, () => [text(), value(depthLeft - 1)]))
    }
    const depthOf = (v: unknown): number =>
      typeof v === 'object' && v !== null ? 1 + Math.max(0, ...Object.values(v).map(depthOf)) : 0
    for (let n = 0; n < 500; n++) {
      const v = value(6)
      const bytes = Buffer.from(JSON.stringify(v), 'utf8')
      for (const max of [0, 1, 2, 3, 4, 5, 6]) expect(jsonNestsDeeperThan(bytes, max), JSON.stringify(v)).toBe(depthOf(v) > max)
    }
  })

  it('still accepts ordinary nested arguments', async () => {
    const response = await fetch(`${normal.origin}/api/conversations/create`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${normal.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ args: [{ title: 'Nested [[[{{{ in text', sampling: { temperature: 0.5, topP: 1, maxTokens: 8 } }] })
    })
    expect(response.status).toBe(200)
  })
})
