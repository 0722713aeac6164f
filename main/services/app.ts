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
import { findSourceRoot, resolveAppPaths, type AppPaths, type AppPathsOptions } from './paths'
import { SettingsService } from './settings-service'
import { UsageSampler } from './usage-sampler'
import { KvSnapshots } from './kv-snapshots'
import { isRecord } from '../common/reader'

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
}

/** The running services; dispose() when done (pairs with createApp). */
export interface App {
  readonly paths: AppPaths
  readonly store: Store
  readonly settings: SettingsService
  readonly models: ModelsService
  readonly conversations: ConversationsService
  readonly chat: ChatService
  readonly devices: DevicesService
  /** live utilization samples (running from createApp until dispose) */
  readonly usage: UsageSampler
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
    const models = new ModelsService(settings, paths.builtInModelDirs)
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
      kvSnapshots
    })
    usage.start()
    const transfer = new ConversationsTransfer(store, conversations)
    const handlers = createApiHandlers({ appVersion: options.appVersion ?? sourceVersion(), notices: store.notices, models, conversations, transfer, chat, settings, devices, usage, kvSnapshots })
    let disposed: Promise<void> | null = null
    return {
      paths,
      store,
      settings,
      models,
      conversations,
      chat,
      devices,
      usage,
      handlers,
      dispatch: createDispatch(handlers),
      dispose: () => {
        usage.stop()
        disposed ??= Promise.all([chat.dispose(), devices.dispose(), searcher.dispose(), models.dispose()])
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
