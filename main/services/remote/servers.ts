/**
 * @file The other servers the user added (Settings → Other servers), their models as model entries, and the key each
 * request needs. A key is never stored in clear: sealed by the OS keychain when the entry hands in a sealer
 * (Electron's safeStorage), else kept in memory until Tandem quits — the row then only says there was one, and the
 * next run shows the server as needing its key again. Each server's model list is kept from its last answer, so a
 * server that is down for a moment keeps its models listed (marked with why they cannot be used now).
 */
import { API_LIMITS, parseRemoteModelId, remoteModelId, type ModelEntry, type RemoteKeyStorage, type RemoteServerInit, type RemoteServers, type RemoteServerView } from '../../../preload/api'
import type { RemoteServerRecord, Store, StoredKey } from '../../store'
import { ApiError, errorMessage, invalid } from '../errors'
import { checkServerUrl, DEFAULT_STALL_MS, listRemoteModels, RemoteError, type RemoteModelInfo, type RemoteServer } from './openai-remote'

/** Seals keys with the OS keychain (Electron's safeStorage); absent where there is none (browser mode, tests). */
export interface KeySealer {
  seal(key: string): Uint8Array
  open(sealed: Uint8Array): string
}

/** What a request to a remote model needs. */
export interface RemoteTarget {
  readonly server: RemoteServer
  readonly serverName: string
  readonly model: string
  /** the context the server states for the model, or null (see ASSUMED_REMOTE_CONTEXT) */
  readonly contextLength: number | null
  /** longest wait for the server's next byte (ms) */
  readonly stallMs: number
}

export interface RemoteServersOptions {
  readonly store: Pick<Store, 'remoteServers'>
  /** null: no keychain here, keys live in memory until quit */
  readonly sealer: KeySealer | null
  /** longest wait for a server's model list (ms); a slow server is shown as not answering */
  readonly probeMs?: number
  /** longest wait for the next byte of an answer before it is given up as stalled (ms; default DEFAULT_STALL_MS) */
  readonly stallMs?: number
  /** a model list younger than this is used as it is by models.list (ms) */
  readonly freshMs?: number
  /** clock (ms) for freshness */
  readonly nowMs?: () => number
  readonly fetch?: typeof fetch
}

/** How long a server gets to list its models (ms): long enough for a busy vLLM, short enough for a settings panel. */
export const DEFAULT_PROBE_MS = 5_000
/** How long a model list is used without asking again (ms). */
export const DEFAULT_FRESH_MS = 15_000

/** What was learned from a server the last time it was asked. */
interface Known {
  readonly models: readonly RemoteModelInfo[]
  readonly problem: string | null
  readonly atMs: number
}

/** Control characters (and DEL) have no place in a name shown in menus and used in API model ids. */
const CONTROL = /[\u0000-\u001f\u007f]/

/** The servers, their keys and models. */
export class RemoteServersService {
  /** keys given this run without a keychain, by server id */
  private readonly sessionKeys = new Map<string, string>()
  private readonly known = new Map<string, Known>()
  private refreshing: Promise<void> | null = null
  private readonly nowMs: () => number

  constructor(private readonly options: RemoteServersOptions) {
    this.nowMs = options.nowMs ?? (() => performance.now())
  }

  /** Every server, each asked for its models first. */
  async list(): Promise<RemoteServers> {
    await this.refresh()
    return this.view()
  }

  /** Adds a server once it listed its models (nothing is stored when it did not). */
  async add(init: RemoteServerInit): Promise<RemoteServers> {
    const { remoteServers } = this.options.store
    const name = init.name.trim()
    if (name === '' || CONTROL.test(name)) throw invalid('Give the server a name (it marks its models in the model picker).')
    if (name.length > API_LIMITS.maxServerNameChars) throw invalid(`A server's name is at most ${API_LIMITS.maxServerNameChars} characters.`)
    const all = remoteServers.list()
    if (all.some((s) => s.name.toLowerCase() === name.toLowerCase())) throw invalid(`There is a server called ${name} already: give this one another name.`)
    if (all.length >= API_LIMITS.maxServers) throw invalid(`At most ${API_LIMITS.maxServers} servers can be added; remove one first.`)
    const url = checked(() => checkServerUrl(init.url.trim())).href.replace(/\/+$/, '')
    const apiKey = init.apiKey === null || init.apiKey.trim() === '' ? null : init.apiKey.trim()
    const models = await this.ask({ baseUrl: url, apiKey })
    if (typeof models === 'string') throw new ApiError('RemoteError', `${name} was not added: ${models}`)
    const record = remoteServers.add({ name, url, key: this.storedKey(apiKey) })
    if (apiKey !== null && this.options.sealer === null) this.sessionKeys.set(record.id, apiKey)
    this.known.set(record.id, { models, problem: null, atMs: this.nowMs() })
    return this.view()
  }

  /** Replaces a server's key and asks it for its models with the new one. */
  async setKey(id: string, key: string | null): Promise<RemoteServers> {
    const apiKey = key === null || key.trim() === '' ? null : key.trim()
    this.options.store.remoteServers.setKey(this.require(id).id, this.storedKey(apiKey))
    this.sessionKeys.delete(id)
    if (apiKey !== null && this.options.sealer === null) this.sessionKeys.set(id, apiKey)
    this.markStale(id)
    return this.list()
  }

  /** Forgets a server and its key. */
  async remove(id: string): Promise<RemoteServers> {
    if (!this.options.store.remoteServers.remove(id)) throw new ApiError('NotFoundError', 'That server is not in the list any more.')
    this.sessionKeys.delete(id)
    this.known.delete(id)
    return this.view()
  }

  /**
   * Every server's models as model entries. A server not asked yet this run is asked first; lists older than
   * freshMs are asked for again in the background (a server that is down must not hold up every model list).
   */
  async modelEntries(): Promise<ModelEntry[]> {
    const freshMs = this.options.freshMs ?? DEFAULT_FRESH_MS
    const servers = this.options.store.remoteServers.list()
    // Only a server never asked this run is waited for (joining a round already running). A known one's list is
    // served as it is while a round runs: that round may be asking this very app (Tandem added as a server of itself).
    if (servers.some((s) => !this.known.has(s.id))) await this.refresh()
    else if (this.refreshing === null && servers.some((s) => this.nowMs() - (this.known.get(s.id)?.atMs ?? 0) > freshMs)) void this.refresh().catch(() => undefined)
    return this.options.store.remoteServers.list().flatMap((s) => this.entriesOf(s))
  }

  /** The entry of a remote model id, asking its server again when it is not listed or not usable; undefined when there is none. */
  async entry(modelId: string): Promise<ModelEntry | undefined> {
    const parsed = parseRemoteModelId(modelId)
    const record = parsed === null ? undefined : this.options.store.remoteServers.get(parsed.serverId)
    if (record === undefined) return undefined
    const find = (): ModelEntry | undefined => this.entriesOf(record).find((e) => e.id === modelId)
    const found = find()
    if (found !== undefined && found.problem === null) return found
    this.markStale(record.id)
    await this.refresh()
    const problem = this.known.get(record.id)?.problem ?? null
    // a server that cannot answer now (its key is missing, it is down) says so for a model it never listed this run
    return find() ?? found ?? (problem === null || parsed === null ? undefined : this.toEntry(record, { id: parsed.model, contextLength: null }, problem))
  }

  /** Where to send a request for a remote model entry; ModelError when its server is gone or has no key now. */
  target(entry: ModelEntry): RemoteTarget {
    const parsed = parseRemoteModelId(entry.id)
    const record = parsed === null ? undefined : this.options.store.remoteServers.get(parsed.serverId)
    if (parsed === null || record === undefined) throw new ApiError('NoModelError', `The server of ${entry.name} is not in Settings → Other servers any more. Choose another model.`)
    const key = this.keyOf(record)
    if (key.problem !== null) throw new ApiError('ModelError', key.problem)
    const info = this.known.get(record.id)?.models.find((m) => m.id === parsed.model)
    return { server: { baseUrl: record.url, apiKey: key.apiKey }, serverName: record.name, model: parsed.model, contextLength: info?.contextLength ?? null, stallMs: this.options.stallMs ?? DEFAULT_STALL_MS }
  }

  /** Has a server asked again at the next round, keeping its last list meanwhile (and if it does not answer). */
  private markStale(id: string): void {
    const k = this.known.get(id)
    if (k !== undefined) this.known.set(id, { ...k, atMs: Number.NEGATIVE_INFINITY })
  }

  /** Asks every server for its models (one round at a time: callers arriving meanwhile wait for it). */
  private refresh(): Promise<void> {
    this.refreshing ??= Promise.all(this.options.store.remoteServers.list().map((s) => this.refreshOne(s))).then(
      () => {
        this.refreshing = null
      },
      (err: unknown) => {
        this.refreshing = null
        throw err
      }
    )
    return this.refreshing
  }

  private async refreshOne(record: RemoteServerRecord): Promise<void> {
    const key = this.keyOf(record)
    const before = this.known.get(record.id)
    if (key.problem !== null) {
      this.known.set(record.id, { models: before?.models ?? [], problem: key.problem, atMs: this.nowMs() })
      return
    }
    const answer = await this.ask({ baseUrl: record.url, apiKey: key.apiKey })
    // the server was removed while it was asked
    if (this.options.store.remoteServers.get(record.id) === undefined) return
    this.known.set(
      record.id,
      typeof answer === 'string' ? { models: before?.models ?? [], problem: answer, atMs: this.nowMs() } : { models: answer, problem: null, atMs: this.nowMs() }
    )
  }

  /** The server's models, or why it did not list them. */
  private async ask(server: RemoteServer): Promise<RemoteModelInfo[] | string> {
    try {
      return await listRemoteModels(server, { stallMs: this.options.probeMs ?? DEFAULT_PROBE_MS, ...(this.options.fetch !== undefined && { fetch: this.options.fetch }) })
    } catch (err) {
      if (err instanceof RemoteError) return err.message
      throw err
    }
  }

  /** How a key the user gave is kept. */
  private storedKey(apiKey: string | null): StoredKey {
    if (apiKey === null) return { kind: 'none' }
    const { sealer } = this.options
    return sealer === null ? { kind: 'session' } : { kind: 'sealed', sealed: sealer.seal(apiKey) }
  }

  /** The server's key for a request, or why there is none. */
  private keyOf(record: RemoteServerRecord): { apiKey: string | null; problem: string | null } {
    if (record.keyKind === 'none') return { apiKey: null, problem: null }
    if (record.keyKind === 'session') {
      const key = this.sessionKeys.get(record.id)
      return key !== undefined ? { apiKey: key, problem: null } : { apiKey: null, problem: `The key of ${record.name} was kept only until Tandem quit (this system has no keychain): enter it again in Settings → Other servers.` }
    }
    const { sealer } = this.options
    if (sealer === null || record.sealedKey === null) return { apiKey: null, problem: `The key of ${record.name} is sealed by a keychain this run cannot open: enter it again in Settings → Other servers.` }
    try {
      return { apiKey: sealer.open(record.sealedKey), problem: null }
    } catch (err) {
      return { apiKey: null, problem: `The keychain could not open the key of ${record.name} (${errorMessage(err)}): enter it again in Settings → Other servers.` }
    }
  }

  private keyStorage(record: RemoteServerRecord): RemoteKeyStorage {
    if (record.keyKind === 'none') return 'none'
    if (record.keyKind === 'sealed') return 'keychain'
    return this.sessionKeys.has(record.id) ? 'memory' : 'missing'
  }

  private view(): RemoteServers {
    const servers: RemoteServerView[] = this.options.store.remoteServers.list().map((s) => {
      const k = this.known.get(s.id)
      return { id: s.id, name: s.name, url: s.url, key: this.keyStorage(s), models: (k?.models ?? []).map((m) => m.id), problem: k?.problem ?? null }
    })
    return { keychain: this.options.sealer !== null, servers }
  }

  private entriesOf(record: RemoteServerRecord): ModelEntry[] {
    const k = this.known.get(record.id)
    return (k?.models ?? []).map((m) => this.toEntry(record, m, k?.problem ?? null))
  }

  private toEntry(record: RemoteServerRecord, m: RemoteModelInfo, problem: string | null): ModelEntry {
    return {
      id: remoteModelId(record.id, m.id),
      name: m.id,
      path: record.url,
      folder: record.name,
      format: 'remote',
      sizeBytes: 0,
      modifiedMs: record.createdAtMs,
      architecture: null,
      quantization: null,
      parameters: null,
      contextLength: m.contextLength,
      // the server applies its own chat template
      hasChatTemplate: true,
      problem,
      origin: 'server',
      server: record.name
    }
  }

  private require(id: string): RemoteServerRecord {
    const record = this.options.store.remoteServers.get(id)
    if (record === undefined) throw new ApiError('NotFoundError', 'That server is not in the list any more.')
    return record
  }
}

/** The URL check's RemoteError as a ValidationError (the user typed it: nothing was asked of any server). */
function checked<T>(f: () => T): T {
  try {
    return f()
  } catch (err) {
    if (err instanceof RemoteError) throw invalid(err.message)
    throw err
  }
}
