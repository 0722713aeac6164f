/**
 * The devices channels over HTTP (browser mode), through the renderer's own client: the same handlers and
 * validators as IPC, malformed settings answered 400 with the ValidationError name.
 */
import { describe, expect, it } from 'vitest'
import { useHostedApp } from './hosted-app'

const hosted = useHostedApp()

/** POSTs raw arguments to a channel the way the client does, returning status and body. */
async function post(channel: string, args: unknown): Promise<{ status: number; body: unknown }> {
  const [service, method] = channel.split(':')
  const res = await fetch(`${hosted.host.origin}/api/${service}/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${hosted.host.token}` },
    body: JSON.stringify({ args })
  })
  return { status: res.status, body: await res.json() }
}

describe('devices over HTTP', () => {
  it('lists devices, reads and sets the placement, and returns usage samples', async () => {
    const devices = await hosted.api.devices.list()
    expect(devices.find((d) => d.id === 'cpu')?.status).toBe('ready')
    expect((await hosted.api.devices.placement()).setting).toEqual({ preset: 'cpu' })
    const view = await hosted.api.devices.setPlacement({ preset: 'layer-split' })
    expect(view.setting).toEqual({ preset: 'layer-split' })
    expect((await hosted.api.devices.placement()).resolved).toEqual(view.resolved)
    const samples = await hosted.api.devices.usage(0)
    expect(Array.isArray(samples)).toBe(true)
    for (const s of samples) expect(s.systemCpuPercent).toBeGreaterThanOrEqual(0)
  })

  it('rejects malformed settings with 400 and a message naming the field', async () => {
    await expect(hosted.api.devices.setPlacement({ preset: 'turbo' } as never)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/setting.preset/) })
    await expect(hosted.api.devices.usage(-5)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(/sinceMs/) })
    const raw = await post('devices:setPlacement', [{ preset: 'custom', placement: { version: 1 } }])
    expect(raw.status).toBe(400)
    expect(raw.body).toMatchObject({ error: { name: 'ValidationError', message: expect.stringMatching(/setting.placement/) } })
  })
})
