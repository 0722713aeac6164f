/** @file A real app (services over a SQLite file in a temp dir) with chosen model folders, and helpers to call it. */
import { join } from 'node:path'
import { createApp, type App, type AppOptions, type DispatchOutcome } from '../../main/services'
import type { ChatEvent, Conversation } from '../../preload/api'
import { sharedModel, sharedModels, tempDir } from '../helpers/paths'

/** The chat model of these tests: stories260K has no chat template, so chat uses the plain-prompt fallback. */
export const CHAT_MODEL = (): string => sharedModel('stories260K/stories260K.bin')

export interface AppFixture {
  readonly app: App
  readonly dir: string
  /** dispatches a request the way a transport does; events are collected */
  call(channel: string, ...args: unknown[]): Promise<DispatchOutcome>
  /** like call, but returns the result and fails the test on an error */
  ok<T = unknown>(channel: string, ...args: unknown[]): Promise<T>
  /** a conversation on the chat model with greedy sampling and a small reply budget */
  conversation(maxTokens?: number): Promise<Conversation>
  dispose(): Promise<void>
}

/** Options: model folders (default: the shared models), whether to start in an existing folder, and the chat's clock and pace. */
export function appFixture(options: { modelDirs?: readonly string[]; dir?: string } & Pick<AppOptions, 'monotonicMs' | 'pace' | 'localApiStarter' | 'hubUrl' | 'modelCatalogFile' | 'keySealer' | 'remoteStallMs'> = {}): AppFixture {
  const scratch = options.dir === undefined ? tempDir('tandem-app-') : null
  const dir = options.dir ?? scratch?.dir ?? ''
  const app = createApp({
    dataDir: join(dir, 'data'),
    modelDirs: options.modelDirs ?? [sharedModels],
    devRoot: null,
    env: {},
    homeDir: join(dir, 'home'),
    appVersion: '9.9.9-test',
    monotonicMs: options.monotonicMs,
    pace: options.pace,
    localApiStarter: options.localApiStarter,
    hubUrl: options.hubUrl,
    modelCatalogFile: options.modelCatalogFile,
    keySealer: options.keySealer,
    remoteStallMs: options.remoteStallMs
  })
  const call = (channel: string, ...args: unknown[]): Promise<DispatchOutcome> =>
    app.dispatch(channel, args, { emit: () => undefined, signal: new AbortController().signal })
  const ok = async <T,>(channel: string, ...args: unknown[]): Promise<T> => {
    const outcome = await call(channel, ...args)
    if (!outcome.ok) throw new Error(`${channel} failed: ${outcome.error.name}: ${outcome.error.message}`)
    // Test-side narrowing of our own app's reply; the contract types say what each channel returns.
    return outcome.result as T
  }
  return {
    app,
    dir,
    call,
    ok,
    conversation: (maxTokens = 24) =>
      ok<Conversation>('conversations:create', { modelId: CHAT_MODEL(), sampling: { temperature: 0, topP: 1, maxTokens } }),
    async dispose() {
      await app.dispose()
      scratch?.dispose()
    }
  }
}

/** Runs a stream channel, collecting its events. */
export async function streamCall(
  app: App,
  channel: string,
  request: unknown,
  onEvent: (event: ChatEvent, events: ChatEvent[]) => void = () => undefined,
  signal: AbortSignal = new AbortController().signal
): Promise<{ outcome: DispatchOutcome; events: ChatEvent[] }> {
  const events: ChatEvent[] = []
  const outcome = await app.dispatch(channel, [request], {
    emit: (e) => {
      const event = e as ChatEvent
      events.push(event)
      onEvent(event, events)
    },
    signal
  })
  return { outcome, events }
}

/** A pace the test opens by hand: each call waits until released (or its request is aborted). */
export function paceGate(): { pace: (signal: AbortSignal) => Promise<void>; release(n: number): void; calls(n: number): Promise<void>; count(): number } {
  const waiting: (() => void)[] = []
  let made = 0
  let credit = 0
  let onCall: (() => void) | null = null
  return {
    pace: (signal) =>
      new Promise<void>((resolve) => {
        made++
        onCall?.()
        if (credit > 0) {
          credit--
          return resolve()
        }
        const done = (): void => {
          signal.removeEventListener('abort', done)
          resolve()
        }
        waiting.push(done)
        signal.addEventListener('abort', done, { once: true })
      }),
    release(n) {
      for (let i = 0; i < n; i++) {
        const next = waiting.shift()
        if (next === undefined) credit++
        else next()
      }
    },
    async calls(n) {
      while (made < n) await new Promise<void>((r) => (onCall = r))
    },
    count: () => made
  }
}
