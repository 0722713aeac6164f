/**
 * Chat when things go wrong underneath it, with the real engine and a real SQLite file: the database fills up
 * mid-reply, the conversation is removed mid-reply, the model's weights produce NaN, the graph cache cannot
 * be written. Replies are held token by token with a pace gate, so nothing depends on the machine's speed.
 */
import { execFileSync } from 'node:child_process'
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { statusForError } from '../../main/server/http-util'
import { PERSIST_INTERVAL_MS, type App } from '../../main/services'
import type { ChatEvent, Message } from '../../preload/api'
import { writeRandomGgufModel } from '../fixtures/random-gguf'
import { tempDir } from '../helpers/paths'
import { appFixture, paceGate, streamCall, type AppFixture } from './app-fixture'

const deltas = (events: ChatEvent[]): string => events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('')
let nextId = 0
const requestId = (): string => `fault-${++nextId}`

/** SQLite's largest max_page_count: no limit but the disk. */
const NO_PAGE_LIMIT = 4294967294

/**
 * Makes the database full the way a full disk does: SQLite may use no more pages than it has now
 * (`PRAGMA max_page_count`, which fails writes with SQLITE_FULL exactly as a full disk does), and filler
 * rows take up the room left in those pages — the last page of the messages table first, which holds the
 * reply being streamed, so its next growth cannot fit.
 */
function fillDatabase(app: App): void {
  const { db, conversations, messages } = app.store
  const filler = conversations.create({ title: 'filler', systemPrompt: '', modelId: null, sampling: {} })
  db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true }))}`)
  for (;;) {
    try {
      messages.append({ conversationId: filler.id, role: 'user', content: 'x' })
    } catch (err) {
      if (err instanceof Error && 'code' in err && err.code === 'SQLITE_FULL') return
      throw err
    }
  }
}

/** Size of the tmpfs the real full-disk test fills: room for the database and the compiled stories260K graph. */
const TMPFS_BYTES = 16 << 20

/** Writes `path` until the file system has no byte left (ENOSPC), in ever smaller pieces. */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w')
  try {
    for (let chunk = 1 << 20; chunk >= 1; chunk >>= 1) {
      const bytes = Buffer.alloc(chunk)
      for (;;) {
        try {
          writeSync(fd, bytes)
        } catch (err) {
          if (err instanceof Error && 'code' in err && err.code === 'ENOSPC') break
          throw err
        }
      }
    }
  } finally {
    closeSync(fd)
  }
}

/** Lets the gated reply through one token at a time until it settles; the outcome and its events. */
async function runToEnd(gate: ReturnType<typeof paceGate>, reply: ReturnType<typeof streamCall>): Promise<Awaited<ReturnType<typeof streamCall>>> {
  let settled = false
  void reply.finally(() => (settled = true))
  while (!settled) {
    const next = gate.count() + 1
    gate.release(1)
    await Promise.race([gate.calls(next), reply])
  }
  return reply
}

/**
 * Streams a reply, fills the disk (`fill`) while it is held after a few tokens, lets it run into the full
 * disk, then makes room (`makeRoom`) and sends again; checks what the caller got and what was stored.
 */
async function fullDiskMidReply(dir: string | undefined, fill: (f: AppFixture) => void, makeRoom: (f: AppFixture) => void): Promise<void> {
  const gate = paceGate()
  // every streamed delta is written (the clock moves a whole write interval per reading)
  let clockMs = 0
  const f = appFixture({ dir, pace: gate.pace, monotonicMs: () => (clockMs += PERSIST_INTERVAL_MS) })
  try {
    const conv = await f.conversation(400)
    const reply = streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' })
    gate.release(4)
    await gate.calls(5)
    const replyId = f.app.store.messages.list(conv.id)[1].id
    const savedBefore = f.app.store.messages.get(replyId)?.content ?? ''
    expect(savedBefore.length).toBeGreaterThan(0)

    fill(f)
    const { outcome, events } = await runToEnd(gate, reply)
    expect(outcome).toMatchObject({ ok: false, error: { name: 'DiskFullError', message: expect.stringMatching(/disk is full/) } })
    const streamed = deltas(events)
    // what was saved is kept: the row holds the text written before the disk filled (or all of it)
    const held = f.app.store.messages.get(replyId)
    expect(held?.content.startsWith(savedBefore)).toBe(true)
    expect(streamed.startsWith(held?.content ?? '?')).toBe(true)
    // the finishing write needs room too (the finished reply enters the search index): it waits for space
    expect(f.app.chat.unfinishedReplyIds).toEqual(held?.status === 'streaming' ? [replyId] : [])

    // space returns; the next request finishes the reply first, then answers normally
    makeRoom(f)
    await f.ok('conversations:update', conv.id, { sampling: { temperature: 0, topP: 1, maxTokens: 6 } })
    gate.release(1000)
    const next = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'The dog' })
    expect(next.outcome).toMatchObject({ ok: true, result: { status: 'complete' } })
    const [, stopped, , answered] = f.app.store.messages.list(conv.id)
    expect(stopped).toMatchObject({ id: replyId, status: 'stopped', content: streamed, error: expect.stringMatching(/disk is full/) })
    expect(answered.status).toBe('complete')
    expect(f.app.chat.unfinishedReplyIds).toEqual([])
    // the stopped reply is searchable now that its finishing write went through
    expect(await f.ok('conversations:search', streamed.split(/\W+/).find((w) => w.length > 3))).not.toEqual([])
  } finally {
    await f.dispose()
  }
}

describe('a full disk during a reply', () => {
  it('is answered over HTTP as 507 Insufficient Storage', () => {
    expect(statusForError('DiskFullError')).toBe(507)
  })

  it("SQLite's page limit (full exactly as a disk): DiskFullError, what was saved kept, stopped once space returns, chat goes on", async () => {
    await fullDiskMidReply(undefined, (f) => fillDatabase(f.app), (f) => f.app.store.db.pragma(`max_page_count = ${NO_PAGE_LIMIT}`))
  })

  it.skipIf(process.getuid?.() !== 0)('a really full disk: the data folder on a small tmpfs filled by another file (needs root)', async (ctx) => {
    const tmp = tempDir('tandem-disk-')
    const disk = join(tmp.dir, 'disk')
    mkdirSync(disk)
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_BYTES}`, 'tandem-full-disk', disk], { stdio: 'pipe' })
    } catch (err) {
      tmp.dispose()
      ctx.skip(`cannot mount a tmpfs here: ${String(err)}`)
    }
    const filler = join(disk, 'filler')
    try {
      await fullDiskMidReply(disk, () => fillDisk(filler), () => rmSync(filler))
    } finally {
      execFileSync('umount', [disk])
      tmp.dispose()
    }
  })
})

describe('removing a conversation while its reply streams', () => {
  it('stops the reply: stored stopped with the text so far, and no token after the removal', async () => {
    const gate = paceGate()
    const f = appFixture({ pace: gate.pace })
    try {
      const conv = await f.conversation(400)
      const reply = streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' })
      gate.release(2)
      await gate.calls(3)
      await f.ok('conversations:remove', conv.id)
      // were the reply still running, these would let it run to its 400 tokens
      gate.release(1000)
      const { outcome, events } = await reply
      expect(outcome).toMatchObject({ ok: true, result: { status: 'stopped', stats: { generatedTokens: 3 } } })
      expect(gate.count()).toBe(3)
      const stored = f.app.store.messages.list(conv.id)[1]
      expect(stored).toMatchObject({ status: 'stopped', content: deltas(events) })
      // restoring it shows the stopped reply
      await f.ok('conversations:restore', conv.id)
      expect((await f.ok<{ messages: Message[] }>('conversations:get', conv.id)).messages[1].status).toBe('stopped')
    } finally {
      await f.dispose()
    }
  })
})

describe('weights that produce NaN or infinity', () => {
  for (const [label, poison, temperature] of [
    ['NaN, greedy', Number.NaN, 0],
    ['NaN, sampled', Number.NaN, 0.8],
    ['infinity, sampled', Number.POSITIVE_INFINITY, 0.8]
  ] as const) {
    it(`${label}: a clear ModelError stored on the reply`, async () => {
      const tmp = tempDir('tandem-nan-')
      const path = join(tmp.dir, 'damaged.gguf')
      await writeRandomGgufModel(path, {
        architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 1, nHeads: 4, nKvHeads: 4,
        vocabSize: 512, contextLength: 128, tensorType: 'f32', seed: 3,
        poison: { 'output_norm.weight': poison }
      })
      const f = appFixture({ modelDirs: [tmp.dir] })
      try {
        const conv = await f.ok<{ id: string }>('conversations:create', { modelId: path, sampling: { temperature, topP: 1, maxTokens: 8 } })
        const { outcome } = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'hello' })
        expect(outcome).toMatchObject({ ok: false, error: { name: 'ModelError', message: expect.stringMatching(/invalid numbers/) } })
        const [, reply] = f.app.store.messages.list(conv.id)
        expect(reply).toMatchObject({ status: 'error', error: expect.stringMatching(/invalid numbers/) })
      } finally {
        await f.dispose()
        tmp.dispose()
      }
    })
  }
})

describe('a graph cache that cannot be written', () => {
  /** Sends one message with the cache folder made unwritable by `block`; the reply, the notice, and the stderr lines. */
  async function chatWithCache(block: (graphsDir: string) => (() => void) | void): Promise<void> {
    const f = appFixture()
    const graphsDir = f.app.paths.graphCacheDir
    const stderr = vi.spyOn(process.stderr, 'write')
    const unblock = block(graphsDir)
    try {
      const conv = await f.conversation(8)
      const { outcome } = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' })
      expect(outcome).toMatchObject({ ok: true, result: { status: 'complete' } })
      // told through the API the renderer asks after every reply
      const notices = await f.app.dispatch('app:notices', [], { emit: () => undefined, signal: new AbortController().signal })
      const notice = notices.ok && Array.isArray(notices.result) ? String(notices.result.find((n) => n.kind === 'graph-cache-temporary')?.message) : ''
      expect(notice).toContain(`The graph cache folder ${graphsDir} cannot be written`)
      const printed = stderr.mock.calls.map((c) => String(c[0])).join('')
      expect(printed).toContain(`tandem: ${notice}`)
      const fallback = /kept in (\S+) until/.exec(notice)?.[1] ?? ''
      expect(fallback.startsWith(tmpdir())).toBe(true)
      expect(readdirSync(fallback).some((name) => name.endsWith('.onnx'))).toBe(true)
      await f.app.chat.dispose()
      expect(existsSync(fallback)).toBe(false)
    } finally {
      stderr.mockRestore()
      unblock?.()
      await f.dispose()
    }
  }

  it('a file where the folder should be: chat works from a temporary cache and says so', async () => {
    await chatWithCache((dir) => writeFileSync(dir, 'not a folder'))
  })

  const root = process.getuid?.() === 0
  it.skipIf(!root)('a read-only file system (a read-only tmpfs mounted there; needs root)', async (ctx) => {
    await chatWithCache((dir) => {
      mkdirSync(dir, { recursive: true })
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tandem-ro-cache', dir], { stdio: 'pipe' })
      } catch (err) {
        ctx.skip(`cannot mount a tmpfs here: ${String(err)}`)
      }
      return () => execFileSync('umount', [dir])
    })
  })

  // root writes through permission bits, so this one only means something for an ordinary user
  it.skipIf(root)('a folder without write permission', async () => {
    await chatWithCache((dir) => {
      mkdirSync(dir, { recursive: true })
      chmodSync(dir, 0o555)
      return () => chmodSync(dir, 0o755)
    })
  })
})
