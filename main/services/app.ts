/**
 * @file Assembles the app's services over one store: what the Electron entry and `tandem serve` both start,
 * and what they dispose on shutdown (usage timer stopped, generations stopped, model closed, device probes
 * finished, database closed).
 */
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { startWorkerThread, workerEntryUrl, type ProviderOptions } from '../engine'
import { openStore, SearchWorker, type Store } from '../store'
import { createApiHandlers, createDispatch, type ApiDispatch } from './api-host'
import { acquireDataLock } from './data-lock'
import type { ApiHandlers } from './api-types'
import { AutoProfiles } from './auto-profiles'
import { ChatService } from './chat-service'
import { ConversationsService } from './conversations-service'
import { ConversationsTransfer } from './conversations-transfer'
import { DevicesService } from './devices-service'
import { ModelsService } from './models-service'
import { downloadSources, ModelDownloads } from './model-downloads'
import { findSourceRoot, resolveAppPaths, type AppPaths, type AppPathsOptions } from './paths'
import { SettingsService } from './settings-service'
import { UsageSampler } from './usage-sampler'
import { KvSnapshots } from './kv-snapshots'
import { LocalApiService, type LocalApiStarter } from './local-api'
import { isRecord } from '../common/reader'
import { RemoteServersService, type KeySealer } from './remote'

/** Options for createApp. */
export interface AppOptions extends AppPathsOptions {
  /** reported by app:version (default: the version in the checkout's package.json) */
  readonly appVersion?: string
  /** ONNX Runtime intra-op threads per model (default: the physical cores, devices/cpu-cores.ts) */
  readonly threads?: number
  /** the services' monotonic clock (ms): the chat's write throttle, the usage sampler's intervals (default performance.now) */
  readonly monotonicMs?: () => number
  /** awaited before each generated token after the first (see ChatServiceDeps.pace); default none */
  readonly pace?: (signal: AbortSignal) => Promise<void>
  /** provider libraries (and the virtual NPU) whose devices the app lists and may place work on */
  readonly providers?: ProviderOptions
  /** the hub models are downloaded from (default: TANDEM_HUB_URL, else https://huggingface.co) */
  readonly hubUrl?: string
  /** the model catalog (default: TANDEM_MODEL_CATALOG, else resources/model-catalog.json) */
  readonly modelCatalogFile?: string
  /** starts the OpenAI-compatible API host (the entries pass main/server's); absent: the API setting starts nothing */
  readonly localApiStarter?: LocalApiStarter
  /** seals other servers' keys with the OS keychain (the Electron entry passes safeStorage's); absent: kept in memory until quit */
  readonly keySealer?: KeySealer
  /** longest wait for another server's next byte before its answer is given up (ms; default 60 s) */
  readonly remoteStallMs?: number
}

/** The running services; dispose() when done (pairs with createApp). */
export interface App {
  readonly paths: AppPaths
  readonly store: Store
  readonly settings: SettingsService
  readonly models: ModelsService
  /** the model catalog and its downloads */
  readonly downloads: ModelDownloads
  readonly conversations: ConversationsService
  readonly chat: ChatService
  readonly devices: DevicesService
  /** live utilization samples (running from createApp until dispose) */
  readonly usage: UsageSampler
  /** the local OpenAI-compatible API, as its setting (or this run) says */
  readonly localApi: LocalApiService
  /** other OpenAI-compatible servers used as backends */
  readonly servers: RemoteServersService
  readonly handlers: ApiHandlers
  /** validates and runs a request by channel name; what the transports call */
  readonly dispatch: ApiDispatch
  dispose(): Promise<void>
}

/** Version from the checkout's package.json, for runs from source. */
function sourceVersion(): string {
  const root = findSourceRoot(import.meta.dirname)
  if (root === null) return '0.0.0'
  try {
    const pkg: unknown = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    if (isRecord(pkg) && typeof pkg.version === 'string') return pkg.version
  } catch {
    // fall through
  }
  return '0.0.0'
}

/**
 * Takes the data folder's lock (creating the folder), opens the database, marks replies cut off by a previous
 * crash as stopped, purges long-deleted conversations, and builds the services. Throws DataFolderInUseError
 * when another process uses the folder, StoreOpenError for an unusable database.
 */
export function createApp(options: AppOptions = {}): App {
  const paths = resolveAppPaths(options)
  mkdirSync(paths.dataDir, { recursive: true })
  const lock = acquireDataLock(paths.dataDir)
  let store: Store
  try {
    store = openStore(paths.databaseFile)
  } catch (err) {
    lock.release()
    throw err
  }
  try {
    store.messages.markInterrupted()
    const settings = new SettingsService(store.settings)
    const servers = new RemoteServersService({ store, sealer: options.keySealer ?? null, stallMs: options.remoteStallMs })
    const models = new ModelsService(settings, paths.builtInModelDirs, paths.ownModelsDir, servers)
    const downloads = new ModelDownloads({ models, modelsDir: paths.ownModelsDir, ...downloadSources(options.env ?? process.env, options) })
    // Search runs on its own read connection in a worker: ranking and cutting snippets over long messages
    // must not hold up calls and reply streams on this thread.
    const searcher = new SearchWorker(paths.databaseFile, { entryUrl: workerEntryUrl, start: (entry, data) => startWorkerThread(entry, data) })
    const conversations = new ConversationsService(store, settings, searcher)
    conversations.purgeDeleted()
    const devices = new DevicesService({ settings, models, profiles: new AutoProfiles(store, { threads: options.threads }), providers: options.providers })
    // reads `chat` only once started (below), after chat exists
    const usage = new UsageSampler({ read: () => chat.usageReading(), deviceIds: () => devices.readyDeviceIds(), monotonicMs: options.monotonicMs })
    const kvSnapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => settings.kvSnapshotBudgetBytes(), log: (line) => process.stderr.write(`tandem: ${line}\n`) })
    const chat = new ChatService({
      store,
      conversations,
      models,
      devices,
      graphCacheDir: paths.graphCacheDir,
      threads: options.threads,
      onGenerationStart: () => usage.poke(),
      monotonicMs: options.monotonicMs,
      pace: options.pace,
      kvSnapshots,
      servers
    })
    usage.start()
    const localApi = new LocalApiService(
      settings,
      { models: () => models.list(), complete: (job, onText, signal) => chat.complete(job, onText, signal), pendingGenerations: () => chat.pendingGenerations },
      options.localApiStarter ?? null
    )
    // a failure to start (a taken port) is shown in Settings, never thrown at start
    void localApi.start()
    const transfer = new ConversationsTransfer(store, conversations)
    const handlers = createApiHandlers({ appVersion: options.appVersion ?? sourceVersion(), notices: store.notices, models, downloads, conversations, transfer, chat, settings, devices, usage, kvSnapshots, localApi, servers })
    let disposed: Promise<void> | null = null
    return {
      paths,
      store,
      settings,
      models,
      downloads,
      conversations,
      chat,
      devices,
      usage,
      localApi,
      servers,
      handlers,
      dispatch: createDispatch(handlers),
      dispose: () => {
        usage.stop()
        // downloads stop first: a download that completes lists the models, which needs the header reader
        disposed ??= downloads
          .dispose()
          .then(() => Promise.all([localApi.dispose(), chat.dispose(), devices.dispose(), searcher.dispose(), models.dispose()]))
          .then(() => undefined)
          .finally(() => {
            try {
              store.close()
            } finally {
              lock.release()
            }
          })
        return disposed
      }
    }
  } catch (err) {
    store.close()
    lock.release()
    throw err
  }
}
