/**
 * @file The local OpenAI-compatible API as a setting (issue #16): on or off, its port and its key are stored; turning
 * it on starts the API host on 127.0.0.1 at once, off stops it, a new key restarts it (tools with the old key are
 * refused from then on). The host itself is the server layer's (main/server/openai); the entries (Electron's main,
 * `tandem serve`) hand its starter in, so these services do not depend on the server. `tandem serve --api` runs it
 * for one run with its own port, key and address, whatever the setting says.
 */
import { randomBytes } from 'node:crypto'
import type { LocalApiPatch, LocalApiView, ModelEntry } from '../../preload/api'
import type { CompletionJob, CompletionOutcome } from './chat-service'
import { errorMessage } from './errors'
import type { SettingsService } from './settings-service'

/** What the API host runs requests on (the app's models and generation queue). */
export interface LocalApiBackend {
  models(): Promise<readonly ModelEntry[]>
  complete(job: CompletionJob, onText: (text: string) => void, signal: AbortSignal): Promise<CompletionOutcome>
  pendingGenerations(): number
}

/** Starts the API host (main/server/openai's startOpenAiHost, handed in by the entry). */
export type LocalApiStarter = (options: {
  readonly backend: LocalApiBackend
  readonly port: number
  readonly apiKey: string
  readonly address: string
}) => Promise<{ readonly baseUrl: string; close(): Promise<void> }>

/** A run of the API for this process only (`tandem serve --api`). */
export interface LocalApiRun {
  readonly port: number
  readonly key: string | undefined
  readonly address: string
}

/** A new API key: 24 random bytes, hex. */
export function newApiKey(): string {
  return randomBytes(24).toString('hex')
}

/** Runs the API host as the setting (or this run) says. */
export class LocalApiService {
  private host: { readonly baseUrl: string; close(): Promise<void> } | null = null
  private problem: string | null = null
  private run: LocalApiRun | null = null
  /** one change at a time: a toggle pressed twice must not start two hosts */
  private changing: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly settings: SettingsService,
    private readonly backend: LocalApiBackend,
    /** null: this process cannot serve it (a test app); the setting is kept but nothing starts */
    private readonly starter: LocalApiStarter | null
  ) {}

  /** Starts the API if the setting says so (at app start). */
  start(): Promise<LocalApiView> {
    return this.change(async () => undefined)
  }

  /** What Settings shows. */
  view(): LocalApiView {
    const stored = this.settings.localApi()
    return {
      enabled: this.run !== null || stored.enabled,
      port: this.run?.port ?? stored.port,
      key: this.key(),
      url: this.host?.baseUrl ?? null,
      problem: this.problem
    }
  }

  /** Stores the setting and starts, stops or moves the host to match. */
  set(patch: LocalApiPatch): Promise<LocalApiView> {
    return this.change(async () => {
      // turning it off in Settings also ends a run started from the command line
      if (!patch.enabled) this.run = null
      this.settings.setLocalApi(patch)
    })
  }

  /** A new key, stored; a running host restarts with it. */
  regenerateKey(): Promise<LocalApiView> {
    return this.change(async () => {
      this.settings.setLocalApiKey(newApiKey())
      if (this.run !== null) this.run = { ...this.run, key: undefined }
    })
  }

  /** Runs the API for this process with these values (not stored). */
  startRun(run: LocalApiRun): Promise<LocalApiView> {
    return this.change(async () => {
      this.run = run
      if (run.key !== undefined) this.settings.setLocalApiKey(run.key)
    })
  }

  async dispose(): Promise<void> {
    await this.changing.catch(() => undefined)
    await this.host?.close()
    this.host = null
  }

  /** The stored key (made on first use). */
  private key(): string {
    const key = this.settings.localApiKey()
    if (key !== null) return key
    const made = newApiKey()
    this.settings.setLocalApiKey(made)
    return made
  }

  /** Applies `update`, then restarts the host to match: stopped when off, started on the port and key when on. */
  private change(update: () => Promise<void>): Promise<LocalApiView> {
    const next = this.changing.then(async () => {
      await update()
      await this.host?.close()
      this.host = null
      this.problem = null
      const want = this.view()
      if (!want.enabled) return want
      if (this.starter === null) {
        this.problem = 'This process does not serve the API.'
        return this.view()
      }
      try {
        this.host = await this.starter({ backend: this.backend, port: want.port, apiKey: want.key, address: this.run?.address ?? '127.0.0.1' })
      } catch (err) {
        this.problem = /EADDRINUSE/.test(errorMessage(err)) ? `Port ${want.port} is taken by another program; choose another.` : `The API could not start: ${errorMessage(err)}`
      }
      return this.view()
    })
    this.changing = next.catch(() => undefined)
    return next
  }
}
