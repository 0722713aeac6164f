/**
 * The browser-mode client (renderer/src/api/http-hosted.api.ts) against the real HTTP host: the whole `Api`
 * surface by its nested names, streamed events through the callback, and errors with the app's names.
 */
import { describe, expect, it } from 'vitest'
import type { ChatEvent } from '../../preload/api'
import { ApiCallError, createHttpApi } from '../../renderer/src/api/http-api'
import { CHAT_MODEL } from '../services/app-fixture'
import { useHostedApp } from './hosted-app'

const hosted = useHostedApp()

describe('createHttpApi', () => {
  it('calls plain methods by their nested names', async () => {
    expect(await hosted.api.app.version()).toBe('9.9.9-test')
    expect((await hosted.api.models.list()).some((m) => m.id === CHAT_MODEL())).toBe(true)
    expect((await hosted.api.settings.get()).sampling.maxTokens).toBe(256)
    const c = await hosted.api.conversations.create({ title: 'client' })
    expect((await hosted.api.conversations.get(c.id)).conversation.title).toBe('client')
    await hosted.api.conversations.remove(c.id)
    expect((await hosted.api.conversations.list()).some((x) => x.id === c.id)).toBe(false)
  })

  it('streams chat events to the callback and resolves with the final message', async () => {
    const c = await hosted.api.conversations.create({ modelId: CHAT_MODEL(), sampling: { temperature: 0, topP: 1, maxTokens: 12 } })
    const events: ChatEvent[] = []
    const message = await hosted.api.chat.send({ requestId: 'client-1', conversationId: c.id, content: 'Once upon a time' }, (e) => events.push(e))
    expect(events[0].type).toBe('started')
    const text = events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('')
    expect(message).toMatchObject({ status: 'complete', content: text })
    expect(await hosted.api.chat.stop('client-1')).toBe(false)
  })

  it('rejects with the app error name, before and after a stream started', async () => {
    await expect(hosted.api.conversations.get('nope')).rejects.toMatchObject({ name: 'NotFoundError' })
    await expect(hosted.api.conversations.get('nope')).rejects.toBeInstanceOf(ApiCallError)
    const c = await hosted.api.conversations.create({ modelId: CHAT_MODEL(), sampling: { temperature: 0, topP: 1, maxTokens: 4 } })
    await expect(hosted.api.chat.send({ requestId: 'client-2', conversationId: c.id, content: ' ' }, () => undefined)).rejects.toMatchObject({
      name: 'ValidationError'
    })
    const events: ChatEvent[] = []
    await expect(
      hosted.api.chat.send({ requestId: 'client-3', conversationId: c.id, content: 'x '.repeat(100_000) }, (e) => events.push(e))
    ).rejects.toMatchObject({ name: 'ContextOverflowError' })
    expect(events.map((e) => e.type)).toEqual(['started'])
  })

  it('says clearly when the token is wrong', async () => {
    const bad = createHttpApi(hosted.host.origin, 'wrong')
    await expect(bad.app.version()).rejects.toMatchObject({ name: 'UnauthorizedError', message: expect.stringMatching(/tandem serve/) })
  })
})
