/**
 * @file Sandboxed preload: exposes exactly one global, `window.tandem`, implementing `Api`, built from the
 * `API_METHODS` table (api.chat.send(...) → channel 'chat:send'). It never exposes `ipcRenderer` or a generic
 * invoke. Main answers every call with an envelope `{ ok, result | error }`; errors are rejected as plain
 * `{ name, message }` objects because contextBridge drops an Error's custom `name`. Streamed events arrive
 * on `STREAM_EVENT_CHANNEL` (api.ts) tagged with the request's id.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron'
import { API_METHODS, STREAM_EVENT_CHANNEL, type Api, type ApiChannel, type ApiErrorShape } from './api'

type Fn = (...args: unknown[]) => Promise<unknown>

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isChannel(name: string): name is ApiChannel {
  return Object.hasOwn(API_METHODS, name)
}

function apiError(name: string, message: string): ApiErrorShape {
  return { name, message }
}

/** The result inside main's reply envelope, or the error it carries (checked: it crossed a process boundary). */
function unwrap(channel: string, reply: unknown): unknown {
  if (isRecord(reply) && reply.ok === true && 'result' in reply) return reply.result
  if (isRecord(reply) && reply.ok === false && isRecord(reply.error)) {
    const { name, message } = reply.error
    if (typeof name === 'string' && typeof message === 'string') throw apiError(name, message)
  }
  throw apiError('InternalError', `${channel}: malformed reply from the app`)
}

/** A request/response method. */
function callMethod(channel: ApiChannel): Fn {
  return async (...args) => unwrap(channel, await ipcRenderer.invoke(channel, ...args))
}

/** A streaming method: the last argument is the event callback, the first carries the request id. */
function streamMethod(channel: ApiChannel): Fn {
  return async (...args) => {
    const onEvent = args[args.length - 1]
    const request = args[0]
    if (typeof onEvent !== 'function' || !isRecord(request) || typeof request.requestId !== 'string') {
      throw apiError('ValidationError', `${channel}: expected (request with a requestId, event callback)`)
    }
    const requestId = request.requestId
    const listener = (_event: IpcRendererEvent, message: unknown): void => {
      if (isRecord(message) && message.requestId === requestId && isRecord(message.event)) onEvent(message.event)
    }
    ipcRenderer.on(STREAM_EVENT_CHANNEL, listener)
    try {
      return unwrap(channel, await ipcRenderer.invoke(channel, ...args.slice(0, -1)))
    } finally {
      ipcRenderer.off(STREAM_EVENT_CHANNEL, listener)
    }
  }
}

/** `Api` built from the table; each service is an object of methods. */
function buildApi(): Api {
  const services: Record<string, Record<string, Fn>> = {}
  for (const channel of Object.keys(API_METHODS).filter(isChannel)) {
    const [service, method] = channel.split(':')
    services[service] ??= {}
    services[service][method] = API_METHODS[channel] === 'stream' ? streamMethod(channel) : callMethod(channel)
  }
  // The one cast: the table's satisfies-clause (api.ts) guarantees every Api method has its channel here,
  // and main validates every argument, so the shape is Api by construction.
  // eslint-disable-next-line @typescript-eslint/consistent-type-assertions -- a table-built object is Api by construction (above)
  return services as unknown as Api
}

contextBridge.exposeInMainWorld('tandem', buildApi())
