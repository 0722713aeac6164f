/**
 * @file Branches and KV snapshots across real process restarts, on a seeded random Qwen2-shaped model with a chat
 * template (the shared models have none, so their chats carry no history). A conversation with a long first message is
 * answered and its snapshot saved; a branch from its first reply is listed under it; a new process (same SQLite
 * file) answers the branch's next message restoring the shared prefix from the snapshot; another new process, with
 * the snapshots cleared, regenerates that reply by computing everything — the same greedy text. The parent itself,
 * continued in a new process, restores its history.
 */
import { execFile } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { Conversation, ConversationDetail, ConversationSummary, Message } from '../../preload/api'
import { writeRandomGgufModel } from '../fixtures/random-gguf'
import { repoRoot, tempDir } from '../helpers/paths'
import { appFixture, streamCall } from './app-fixture'

const run = promisify(execFile)
const scratch = tempDir('tandem-branches-')
afterAll(() => scratch.dispose())

const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends. One day, she found a shiny red ball under a big tree. '

/** One chat request in a new process on the app folder `dir`; the final assistant message. */
async function inNewProcess(dir: string, models: string, action: 'send' | 'regenerate', conversationId: string, text?: string): Promise<Message> {
  const args = ['--import', 'tsx', join(repoRoot, 'test/services/chat-child.ts'), dir, models, action, conversationId, ...(text === undefined ? [] : [text])]
  const { stdout } = await run(process.execPath, args, { cwd: repoRoot, maxBuffer: 1 << 20 })
  const parsed: unknown = JSON.parse(stdout.trim().split('\n').at(-1) ?? '')
  return parsed as Message
}

describe('branches and snapshots across restarts', () => {
  it('a branch is listed under its parent and its next reply restores the shared prefix in a new process, as a recompute answers', async () => {
    const dir = join(scratch.dir, 'app')
    const models = join(scratch.dir, 'models')
    const modelPath = join(models, 'random-qwen2-chat.gguf')
    mkdirSync(models)
    await writeRandomGgufModel(modelPath, { architecture: 'qwen2', dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 512, contextLength: 2048, tensorType: 'f32', seed: 11 })
    let f = appFixture({ dir, modelDirs: [models] })
    const parent = await f.ok<Conversation>('conversations:create', { modelId: modelPath, sampling: { temperature: 0, topP: 1, maxTokens: 16 } })
    const send = async (conversationId: string, content: string): Promise<Message> => {
      const { outcome } = await streamCall(f.app, 'chat:send', { requestId: `r-${Math.random()}`, conversationId, content })
      if (!outcome.ok) throw new Error(outcome.error.message)
      return outcome.result as Message
    }
    const firstReply = await send(parent.id, STORY.repeat(4))
    await send(parent.id, 'What did Lily do next?')
    await f.app.chat.snapshotSaved()
    expect((await f.ok<{ blocks: number }>('settings:kvSnapshots')).blocks).toBeGreaterThan(0)

    const branch = await f.ok<Conversation>('conversations:branch', parent.id, firstReply.id)
    expect(branch.parentId).toBe(parent.id)
    const detail = await f.ok<ConversationDetail>('conversations:get', branch.id)
    expect(detail.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', STORY.repeat(4)],
      ['assistant', firstReply.content]
    ])
    const list = await f.ok<ConversationSummary[]>('conversations:list')
    expect(list.find((c) => c.id === branch.id)?.parentId).toBe(parent.id)
    // the parent keeps all four messages
    expect((await f.ok<ConversationDetail>('conversations:get', parent.id)).messages).toHaveLength(4)
    await f.dispose()

    // the parent continued in a new process restores its saved history (at least the first message's blocks)
    const continued = await inNewProcess(dir, models, 'send', parent.id, 'The end.')
    expect(continued.stats?.restoredTokens).toBeGreaterThanOrEqual(256)

    // a new process: the branch's prompt begins with the parent's saved tokens
    const restored = await inNewProcess(dir, models, 'send', branch.id, 'And then?')
    expect(restored.stats?.restoredTokens).toBeGreaterThanOrEqual(256)
    expect(restored.stats?.reusedTokens).toBe(restored.stats?.restoredTokens)

    // clear the snapshots, then a new process computes the same reply from scratch
    f = appFixture({ dir, modelDirs: [models] })
    await f.ok('settings:clearKvSnapshots')
    await f.dispose()
    const recomputed = await inNewProcess(dir, models, 'regenerate', branch.id)
    expect(recomputed.stats?.restoredTokens).toBe(0)
    expect(recomputed.content).toBe(restored.content)
  }, 300_000)
})
