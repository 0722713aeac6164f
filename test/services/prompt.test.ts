/**
 * Prompt building with a chat template, on a seeded random Qwen2-shaped model (ChatML template, context
 * 256) opened by the real engine: system prompt + history, dropping the oldest turns to fit, and a clear
 * overflow error when even the last message cannot fit.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TextModel, type ChatMessage } from '../../main/engine'
import { ApiError, buildPrompt } from '../../main/services'
import type { ConversationDetail, Conversation, Message } from '../../preload/api'
import { writeHfModel } from '../fixtures/hf-writer'
import { tempDir } from '../helpers/paths'
import { appFixture, streamCall } from './app-fixture'

const scratch = tempDir('tandem-prompt-')
const folder = join(scratch.dir, 'models', 'toy-qwen2')
let model: TextModel

beforeAll(async () => {
  writeHfModel(folder, { preset: 'qwen2', seed: 7 })
  model = await TextModel.open(folder, { cacheDir: join(scratch.dir, 'cache') })
})
afterAll(async () => {
  await model.dispose()
  scratch.dispose()
})

const turn = (role: 'user' | 'assistant', content: string): ChatMessage => ({ role, content })

describe('buildPrompt with a chat template', () => {
  it('renders the system prompt and the whole history when it fits', () => {
    const history = [turn('user', 'hello'), turn('assistant', 'hi there'), turn('user', 'how are you')]
    const built = buildPrompt(model, 'Be brief.', history, 32)
    expect(built.mode).toBe('chat')
    expect(built.droppedMessages).toBe(0)
    expect(built.promptIds).toEqual(model.encodeChat([{ role: 'system', content: 'Be brief.' }, ...history]))
    // a blank system prompt is left out
    expect(buildPrompt(model, '  ', history, 32).promptIds).toEqual(model.encodeChat(history))
  })

  it('drops the oldest turns, starting at a user turn, so the rest fits with room for the reply', () => {
    expect(model.contextLength).toBe(256)
    const long = 'the cat sat on the mat and looked at the dog '.repeat(3)
    const history: ChatMessage[] = []
    for (let i = 0; i < 12; i++) history.push(turn('user', `${i} ${long}`), turn('assistant', `${i} ${long}`))
    history.push(turn('user', 'and now?'))
    const built = buildPrompt(model, 'sys', history, 64)
    expect(built.droppedMessages).toBeGreaterThan(0)
    expect(history[built.droppedMessages].role).toBe('user')
    expect(built.promptIds).toEqual(model.encodeChat([{ role: 'system', content: 'sys' }, ...history.slice(built.droppedMessages)]))
    expect(built.promptIds.length).toBeLessThanOrEqual(256 - 64)
    // one more turn would not have fitted
    const more = model.encodeChat([{ role: 'system', content: 'sys' }, ...history.slice(built.droppedMessages - 2)])
    expect(more.length).toBeGreaterThan(256 - 64)
  })

  it('throws ContextOverflowError when the last message alone does not fit', () => {
    const history = [turn('user', 'word '.repeat(400))]
    let error: unknown
    try {
      buildPrompt(model, '', history, 16)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ name: 'ContextOverflowError', message: expect.stringMatching(/context holds 256/) })
  })
})

describe('chat with a chat-template model', () => {
  it('sends the system prompt and history through the template', async () => {
    const f = appFixture({ modelDirs: [join(scratch.dir, 'models')] })
    try {
      const conv = await f.ok<Conversation>('conversations:create', {
        systemPrompt: 'You are terse.',
        modelId: folder,
        sampling: { temperature: 0, topP: 1, maxTokens: 6 }
      })
      const { outcome } = await streamCall(f.app, 'chat:send', { requestId: 't1', conversationId: conv.id, content: 'hello' })
      expect(outcome.ok).toBe(true)
      const reply = outcome.ok ? (outcome.result as Message) : null
      expect(reply?.status).toBe('complete')
      expect(reply?.stats?.promptTokens).toBe(model.encodeChat([{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'hello' }]).length)
      const messages = (await f.ok<ConversationDetail>('conversations:get', conv.id)).messages
      expect(messages).toHaveLength(2)
    } finally {
      await f.dispose()
    }
  })
})
