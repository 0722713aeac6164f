/**
 * @file The one table of handlers behind every `service:method` channel, and the dispatcher both
 * transports (Electron IPC in main/index.ts, HTTP in main/server) call: unknown channel or malformed
 * arguments → ValidationError-style reply, any exception → `{ name, message }`. It never throws.
 */
import type { ApiChannel, ApiErrorShape, AppNotice } from '../../preload/api'
import type { ApiHandlers, ApiResult, CallContext } from './api-types'
import { isApiChannel } from './api-types'
import { API_VALIDATORS, type ApiValidators } from './api-validate'
import type { ChatService } from './chat-service'
import type { ConversationsService } from './conversations-service'
import type { ConversationsTransfer } from './conversations-transfer'
import type { DevicesService } from './devices-service'
import { ApiError, toApiError } from './errors'
import type { ModelDownloads } from './model-downloads'
import type { ModelsService } from './models-service'
import type { SettingsService } from './settings-service'
import type { UsageSampler } from './usage-sampler'
import type { KvSnapshots } from './kv-snapshots'
import type { LocalApiService } from './local-api'
import type { RemoteServersService } from './remote'

/** The services the handlers are built from. */
export interface ApiServices {
  readonly appVersion: string
  /** what the app found at start (the database check); the chat service adds its own */
  readonly notices: readonly AppNotice[]
  readonly models: ModelsService
  /** the model catalog and its downloads */
  readonly downloads: ModelDownloads
  readonly conversations: ConversationsService
  /** export and import of conversations */
  readonly transfer: ConversationsTransfer
  readonly chat: ChatService
  readonly settings: SettingsService
  readonly devices: DevicesService
  readonly usage: UsageSampler
  readonly kvSnapshots: KvSnapshots
  readonly localApi: LocalApiService
  /** other OpenAI-compatible servers used as backends */
  readonly servers: RemoteServersService
}

/** Builds the handler table; each handler receives arguments already validated. */
export function createApiHandlers(s: ApiServices): ApiHandlers {
  return {
    'app:version': async () => s.appVersion,
    'app:notices': async () => [...s.notices, ...s.chat.notices()],
    'models:list': () => s.models.list(),
    'models:folders': () => s.models.scannedFolders(),
    'models:addFolder': ([path]) => s.models.addFolder(path),
    'models:removeFolder': ([path]) => s.models.removeFolder(path),
    'models:addFile': ([path]) => s.models.addFile(path),
    'models:remove': ([modelId]) => s.models.remove(modelId),
    'models:catalog': () => s.downloads.catalog(),
    'models:download': ([request], ctx) => s.downloads.download(request.catalogId, ctx.emit, ctx.signal),
    'models:pauseDownload': ([catalogId]) => s.downloads.pause(catalogId),
    'models:cancelDownload': ([catalogId]) => s.downloads.cancel(catalogId),
    'servers:list': () => s.servers.list(),
    'servers:add': ([init]) => s.servers.add(init),
    'servers:setKey': ([id, apiKey]) => s.servers.setKey(id, apiKey),
    'servers:remove': ([id]) => s.servers.remove(id),
    'conversations:list': async () => s.conversations.list(),
    'conversations:create': async ([init]) => s.conversations.create(init),
    'conversations:get': async ([id]) => s.conversations.get(id),
    'conversations:update': async ([id, patch]) => s.conversations.update(id, patch),
    'conversations:remove': async ([id]) => s.conversations.remove(id),
    'conversations:restore': async ([id]) => s.conversations.restore(id),
    'conversations:search': async ([query]) => s.conversations.search(query),
    'conversations:branch': async ([id, messageId]) => s.conversations.branch(id, messageId),
    'conversations:export': async ([ids, format]) => s.transfer.export(ids, format),
    'conversations:import': async ([json]) => s.transfer.import(json),
    'chat:send': ([request], ctx) => s.chat.send(request, ctx.emit, ctx.signal),
    'chat:regenerate': ([request], ctx) => s.chat.regenerate(request, ctx.emit, ctx.signal),
    'chat:edit': ([request], ctx) => s.chat.edit(request, ctx.emit, ctx.signal),
    'chat:stop': async ([requestId]) => s.chat.stop(requestId),
    'summaries:start': ([request], ctx) => s.chat.summarize(request, ctx.emit, ctx.signal),
    'settings:get': async () => s.settings.get(),
    'settings:update': async ([patch]) => s.settings.update(patch),
    'settings:kvSnapshots': async () => s.kvSnapshots.usage(),
    'settings:clearKvSnapshots': async () => s.kvSnapshots.clear(),
    'settings:localApi': async () => s.localApi.view(),
    'settings:setLocalApi': ([patch]) => s.localApi.set(patch),
    'settings:regenerateApiKey': () => s.localApi.regenerateKey(),
    'devices:list': () => s.devices.list(),
    'devices:usage': async ([sinceMs]) => s.usage.samples(sinceMs),
    'devices:placement': () => s.devices.placement(),
    'devices:setPlacement': ([setting]) => s.devices.setPlacement(setting),
    'devices:providerLibraries': () => s.devices.providerLibraries(),
    'devices:addProviderLibrary': ([name, path, options]) => s.devices.addProviderLibrary(name, path, options),
    'devices:removeProviderLibrary': ([name]) => s.devices.removeProviderLibrary(name)
  }
}

/** A dispatch outcome: the result, or the error as it crosses the boundary. */
export type DispatchOutcome = { readonly ok: true; readonly result: unknown } | { readonly ok: false; readonly error: ApiErrorShape }

/** What a transport supplies with each request. */
export interface DispatchContext {
  /** sends a streamed event to the caller */
  readonly emit: (event: unknown) => void
  /** aborted when the caller goes away */
  readonly signal: AbortSignal
}

/** Validates and runs one request by channel name; never throws. */
export type ApiDispatch = (channel: string, args: unknown, context: DispatchContext) => Promise<DispatchOutcome>

/** Runs one typed channel: validate, then handle. */
async function invoke<C extends ApiChannel>(
  handlers: ApiHandlers,
  validators: ApiValidators,
  channel: C,
  raw: unknown,
  context: CallContext<C>
): Promise<ApiResult<C>> {
  let args
  try {
    args = validators[channel](raw)
  } catch (err) {
    const e = toApiError(err)
    throw new ApiError(e.name === 'InternalError' ? 'ValidationError' : e.name, `${channel}: ${e.message}`)
  }
  return handlers[channel](args, context)
}

/** The dispatcher over a handler table (and the contract's validators). */
export function createDispatch(handlers: ApiHandlers, validators: ApiValidators = API_VALIDATORS): ApiDispatch {
  return async (channel, args, context) => {
    try {
      if (!isApiChannel(channel)) throw new ApiError('UnknownMethodError', `Unknown API method "${channel.slice(0, 100)}".`)
      const result = await invoke(handlers, validators, channel, args, context)
      return { ok: true, result: result ?? null }
    } catch (err) {
      const e = toApiError(err)
      if (e.name === 'InternalError') {
        const detail = e.cause instanceof Error ? (e.cause.stack ?? e.cause.message) : e.message
        process.stderr.write(`tandem: ${channel.slice(0, 100)} failed: ${detail}\n`)
      }
      return { ok: false, error: e.toShape() }
    }
  }
}
