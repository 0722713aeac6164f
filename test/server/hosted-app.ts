/**
 * The app fixture behind a real HTTP host, with the renderer's own client, for one test file:
 * `useHostedApp()` registers the beforeAll/afterAll hooks; its getters work inside the tests.
 */
import { afterAll, beforeAll } from 'vitest'
import { startHttpHost, type HttpHost } from '../../main/server'
import type { Api } from '../../preload/api'
import { createHttpApi } from '../../renderer/src/api/http-api'
import { appFixture, type AppFixture } from '../services/app-fixture'

/** What a test file talks to, once the hooks have started it. */
export class HostedApp {
  private started: { f: AppFixture; host: HttpHost; api: Api } | null = null

  get f(): AppFixture {
    return this.get().f
  }

  get host(): HttpHost {
    return this.get().host
  }

  get api(): Api {
    return this.get().api
  }

  async start(): Promise<void> {
    const f = appFixture()
    const host = await startHttpHost({ dispatch: f.app.dispatch, staticDir: null })
    this.started = { f, host, api: createHttpApi(`${host.origin}/`, host.token) }
  }

  async stop(): Promise<void> {
    await this.started?.host.close()
    await this.started?.f.dispose()
    this.started = null
  }

  private get(): { f: AppFixture; host: HttpHost; api: Api } {
    if (this.started === null) throw new Error('the hosted app is used outside its tests')
    return this.started
  }
}

/** Starts the app and its HTTP host before the file's tests and closes both after them. */
export function useHostedApp(): HostedApp {
  const hosted = new HostedApp()
  beforeAll(() => hosted.start())
  afterAll(() => hosted.stop())
  return hosted
}
