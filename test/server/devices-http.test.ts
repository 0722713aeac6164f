/**
 * The devices channels over HTTP (browser mode), through the renderer's own client: the same handlers and
 * validators as IPC, malformed settings answered 400 with the ValidationError name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startHttpHost, type HttpHost } from '../../main/server'
import type { Api } from '../../preload/api'
import { createHttpApi } from '../../renderer/src/api/http-api'
import { appFixture, type AppFixture } from '../services/app-fixture'

let f: AppFixture
let host: HttpHost
let api: Api

beforeAll(async () => {
  f = appFixture()
  host = await startHttpHost({ dispatch: f.app.dispatch, staticDir: null })
  api = createHttpApi(`${host.origin}/`, host.token)
})
afterAll(async () => {
  await host.close()
  await f.dispose()
})

/** POSTs raw arguments to a channel the way the client does, returning status and body. */
async function post(channel: string, args: unknown): Promise<{ status: number; body: unknown }> {
  const [service, method] = channel.split(':')
  const res = await fetch(`${host.origin}/api/${service}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${host.token}` },
    body: JSON.stringify({ args })
  })
  return { status: res.status, body: await res.json() }
}

describe('devices over HTTP', () => {
  it('lists devices, reads and sets the placement, and returns usage samples', async () => {
    const devices = await api.devices.list()
    expect(devices.find((d) => d.id === 'cpu')?.status).toBe('ready')
    expect((await api.devices.placement()).setting).toEqual({ preset: 'cpu' })
    const view = await api.devices.setPlacement({ preset: 'layer-split' })
    expect(view.setting).toEqual({ preset: 'layer-split' })
    expect((await api.devices.placement()).resolved).toEqual(view.resolved)
    const samples = await api.devices.usage(0)
    expect(Array.isArray(samples)).toBe(true)
    for (const s of samples) expect(s.systemCpuPercent).toBeGreaterThanOrEqual(0)
  })

  it('rejects malformed settings with 400 and a message naming the field', async () => {
    await expect(api.devices.setPlacement({ preset: 'turbo' } as never)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/setting.preset/) })
    await expect(api.devices.usage(-5)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/sinceMs/) })
    const raw = await post('devices:setPlacement', [{ preset: 'custom', placement: { version: 1 } }])
    expect(raw.status).toBe(400)
    expect(raw.body).toMatchObject({ error: { name: 'ValidationError', message: expect.stringMatching(/setting.placement/) } })
  })
})
