/**
 * @file Settings → Local API on the real app and the real API host: off by default with a stable key; turned on it
 * serves the OpenAI client at once; a new key refuses the old one; a taken port is reported, not thrown; off stops
 * it; the setting survives a restart (a new app on the same data folder starts it by itself).
 */
import { createServer } from 'node:net'
import OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { startLocalApi } from '../../main/server'
import type { LocalApiView } from '../../preload/api'
import { tempDir } from '../helpers/paths'
import { appFixture } from './app-fixture'

/** A port free right now (the OS picks it). */
async function freePort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  const address = s.address()
  await new Promise((r) => s.close(r))
  return typeof address === 'object' && address !== null ? address.port : 0
}

const client = (view: LocalApiView, key = view.key): OpenAI => new OpenAI({ baseURL: view.url ?? 'http://127.0.0.1:1/v1', apiKey: key, maxRetries: 0 })

describe('the Local API setting', () => {
  it('off by default; on serves the API; a new key refuses the old; a taken port is reported; off stops it; a restart keeps it', async () => {
    const scratch = tempDir('tandem-local-api-')
    const f = appFixture({ dir: scratch.dir, localApiStarter: startLocalApi })
    let blocker: ReturnType<typeof createServer> | null = null
    try {
      const first = await f.ok<LocalApiView>('settings:localApi')
      expect(first).toEqual({ enabled: false, port: 8391, key: expect.stringMatching(/^[0-9a-f]{48}$/), url: null, problem: null })
      expect((await f.ok<LocalApiView>('settings:localApi')).key).toBe(first.key)

      const port = await freePort()
      const on = await f.ok<LocalApiView>('settings:setLocalApi', { enabled: true, port })
      expect(on).toMatchObject({ enabled: true, port, url: `http://127.0.0.1:${port}/v1`, problem: null })
      expect((await client(on).models.list()).data.map((m) => m.id)).toContain('stories260K.bin')

      const renewed = await f.ok<LocalApiView>('settings:regenerateApiKey')
      expect(renewed.key).not.toBe(on.key)
      expect(renewed.url).toBe(on.url)
      await expect(client(renewed, on.key).models.list()).rejects.toMatchObject({ status: 401 })
      expect((await client(renewed).models.list()).data.length).toBeGreaterThan(0)

      // another program holds the next port: reported in the view, the app carries on
      const taken = await freePort()
      blocker = createServer()
      await new Promise<void>((r) => blocker?.listen(taken, '127.0.0.1', r))
      const clash = await f.ok<LocalApiView>('settings:setLocalApi', { enabled: true, port: taken })
      expect(clash).toMatchObject({ enabled: true, url: null, problem: `Port ${taken} is taken by another program; choose another.` })

      const back = await f.ok<LocalApiView>('settings:setLocalApi', { enabled: true, port })
      expect(back.url).toBe(`http://127.0.0.1:${port}/v1`)
      // invalid settings are refused before anything changes
      expect(await f.call('settings:setLocalApi', { enabled: true, port: 80 })).toMatchObject({ ok: false, error: { name: 'ValidationError' } })
      expect((await f.ok<LocalApiView>('settings:localApi')).url).toBe(back.url)
    } finally {
      blocker?.close()
      await f.dispose()
    }
    // a new app on the same data folder starts it as stored, with the same key
    const again = appFixture({ dir: scratch.dir, localApiStarter: startLocalApi })
    try {
      await expect.poll(async () => (await again.ok<LocalApiView>('settings:localApi')).url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
      const view = await again.ok<LocalApiView>('settings:localApi')
      expect((await client(view).models.list()).data.length).toBeGreaterThan(0)
      const off = await again.ok<LocalApiView>('settings:setLocalApi', { enabled: false, port: view.port })
      expect(off).toMatchObject({ enabled: false, url: null })
      await expect(client(view).models.list()).rejects.toThrow()
    } finally {
      await again.dispose()
      scratch.dispose()
    }
  })
})
