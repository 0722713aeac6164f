/**
 * @file The `Api` over HTTP, for browser mode (`tandem serve`): `POST /api/<service>/<method>` with the
 * per-launch token as a Bearer header and `{ "args": [...] }` as the body. Calls answer `{ result }` or
 * `{ error: { name, message } }`; stream methods answer Server-Sent Events (`chat` per event, then `result`
 * or `error`). Failures reject with an ApiCallError carrying the app's error name.
 */
import { API_METHODS, type Api, type ApiChannel } from '../../../preload/api'

/** The contract's method table: the same one the Electron preload bridge is generated from. */
const METHODS = API_METHODS

/** An error from the app (or the connection to it), with the app's error name. */
export class ApiCallError extends Error {
  constructor(
    override readonly name: string,
    message: string
  ) {
    super(message)
  }
}

type Fn = (...args: unknown[]) => Promise<unknown>

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isChannel(name: string): name is ApiChannel {
  return Object.hasOwn(METHODS, name)
}

/** The `{ name, message }` inside an error body, or a generic one naming the HTTP status. */
function errorFrom(body: unknown, status: number): ApiCallError {
  if (status === 401) {
    return new ApiCallError('UnauthorizedError', 'This page has no valid access token: open the full address that `tandem serve` printed.')
  }
  const e = isRecord(body) ? body.error : undefined
  if (isRecord(e) && typeof e.name === 'string' && typeof e.message === 'string') return new ApiCallError(e.name, e.message)
  return new ApiCallError('InternalError', `The app answered HTTP ${status} without an error description.`)
}

/** Parses SSE text into frames; returns the frames and the unfinished rest. */
function takeFrames(buffer: string): { frames: Array<{ event: string; data: string }>; rest: string } {
  const parts = buffer.split('\n\n')
  const rest = parts.pop() ?? ''
  const frames = parts.map((part) => {
    let event = 'message'
    const data: string[] = []
    for (const line of part.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
    }
    return { event, data: data.join('\n') }
  })
  return { frames, rest }
}

/** Reads an SSE response: calls `onEvent` per `chat` frame, resolves with `result`, rejects on `error`. */
async function readStream(response: Response, onEvent: (event: unknown) => void): Promise<unknown> {
  const reader = response.body?.getReader()
  if (reader === undefined) throw new ApiCallError('InternalError', 'The app sent an empty stream.')
  const decoder = new TextDecoder()
  let buffer = ''
  for (;;) {
    const { done, value } = await reader.read()
    buffer += decoder.decode(value, { stream: !done })
    const { frames, rest } = takeFrames(buffer)
    buffer = rest
    for (const frame of frames) {
      const data: unknown = frame.data === '' ? null : JSON.parse(frame.data)
      if (frame.event === 'chat') onEvent(data)
      else if (frame.event === 'result') return data
      else if (frame.event === 'error') throw errorFrom({ error: data }, 500)
    }
    if (done) throw new ApiCallError('InternalError', 'The connection to the app closed before the reply finished.')
  }
}

/** An `Api` that talks to the HTTP host at `baseUrl` (e.g. http://127.0.0.1:PORT) with `token`. */
export function createHttpApi(baseUrl: string, token: string): Api {
  const base = baseUrl.replace(/\/+$/, '')
  const post = (channel: ApiChannel, args: readonly unknown[]): Promise<Response> => {
    const [service, method] = channel.split(':')
    return fetch(`${base}/api/${service}/${method}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ args })
    })
  }
  const json = async (response: Response): Promise<unknown> => {
    const body: unknown = await response.json().catch(() => null)
    if (!response.ok) throw errorFrom(body, response.status)
    if (!isRecord(body) || !('result' in body)) throw new ApiCallError('InternalError', 'The app sent a malformed reply.')
    return body.result
  }
  const call =
    (channel: ApiChannel): Fn =>
    async (...args) =>
      json(await post(channel, args))
  const stream =
    (channel: ApiChannel): Fn =>
    async (...args) => {
      const onEvent = args[args.length - 1]
      if (typeof onEvent !== 'function') throw new ApiCallError('ValidationError', `${channel}: the last argument must be an event callback`)
      const response = await post(channel, args.slice(0, -1))
      // A stream that fails before its first event is answered as a plain JSON error.
      if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return json(response)
      return readStream(response, (event) => onEvent(event))
    }
  const services: Record<string, Record<string, Fn>> = {}
  for (const channel of Object.keys(METHODS).filter(isChannel)) {
    const [service, method] = channel.split(':')
    services[service] ??= {}
    services[service][method] = METHODS[channel] === 'stream' ? stream(channel) : call(channel)
  }
  // The one cast: METHODS is checked against the contract's table, which is checked against Api.
  // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- a table-built object is Api by construction (above)
  return services as unknown as Api
}
