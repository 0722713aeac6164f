/**
 * @file Summaries through the services' dispatcher with the real engine (stories260K: a 512-token context, no chat
 * template) and a real SQLite file: a generated multi-page PDF becomes a conversation holding the file, with progress
 * that counts every map-reduce step up to its total and the final summary streamed; the same file is offered again
 * from the store; follow-up questions carry the file's passages; a stop leaves the app ready; bad files get clear
 * errors and create nothing. The tiny model writes poor summaries: the checks are about the pipeline.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChatEvent, ConversationDetail, ConversationSummary, Message, SummaryEvent, SummaryOutcome } from '../../preload/api'
import { writePdf } from '../fixtures/pdf-writer'
import { appFixture, CHAT_MODEL, streamCall, type AppFixture } from './app-fixture'

let f: AppFixture
beforeAll(async () => {
  f = appFixture()
  await f.ok('settings:update', { defaultModelId: CHAT_MODEL(), sampling: { temperature: 0, topP: 1, maxTokens: 24 } })
})
afterAll(() => f.dispose())

let nextId = 0
const requestId = (): string => `sum-${++nextId}`
const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64')

const ANIMALS = ['fox', 'owl', 'bear', 'frog', 'duck', 'cat', 'dog', 'deer', 'goat', 'hen', 'mole', 'seal']
/** Twelve pages of little stories, each page about its own animal, under a running header and page numbers. */
const PAGES = ANIMALS.map((animal, i) => [
  'GREEN VALLEY STORIES',
  ...Array.from({ length: 6 }, (_, k) => `The ${animal} walked to the river on day ${k + 1} and met a friend who liked to sing.`),
  i === 8 ? 'The deer found a golden compass named Quillon under the old bridge.' : `The ${animal} went home happy.`,
  `Page ${i + 1} of 12`
])
const PDF = writePdf(PAGES)

/** Runs summaries:start; events as SummaryEvent. */
async function summarizeCall(fileName: string, bytes: Uint8Array, reuse: boolean, onEvent?: (e: SummaryEvent, all: SummaryEvent[]) => void, signal?: AbortSignal) {
  const { outcome, events } = await streamCall(f.app, 'summaries:start', { requestId: requestId(), fileName, data: base64(bytes), reuse }, onEvent as ((e: ChatEvent, all: ChatEvent[]) => void) | undefined, signal)
  return { outcome, events: events as SummaryEvent[] }
}

let summarizedId = ''

describe('summaries:start', () => {
  it('a 12-page PDF: a conversation with the file, progress to the total, the summary streamed and stored with stats', async () => {
    const { outcome, events } = await summarizeCall('stories.pdf', PDF, true)
    if (!outcome.ok) throw new Error(outcome.error.message)
    const result = outcome.result as SummaryOutcome
    expect(result.reused).toBe(false)
    summarizedId = result.conversationId
    expect(events[0]).toMatchObject({
      type: 'created',
      conversation: { id: result.conversationId, title: 'stories.pdf' },
      document: { name: 'stories.pdf', type: 'pdf', bytes: PDF.byteLength, sha256: createHash('sha256').update(PDF).digest('hex') }
    })
    expect(events[1]).toMatchObject({ type: 'started', userMessage: { role: 'user', content: 'Summarize stories.pdf' }, assistantMessage: { status: 'streaming' } })
    const progress = events.flatMap((e) => (e.type === 'progress' ? [e] : []))
    // the text does not fit one 512-token prompt: several parts, then at least one combine
    expect(progress[0]).toMatchObject({ done: 0, etaMs: null })
    expect(progress.at(-1)?.done).toBe(progress.at(-1)?.total)
    expect(progress.at(-1)?.total).toBeGreaterThanOrEqual(3)
    for (let i = 1; i < progress.length; i++) expect(progress[i].done).toBeGreaterThanOrEqual(progress[i - 1].done)
    expect(progress.filter((p) => p.done > 0).every((p) => p.etaMs !== null && p.etaMs >= 0)).toBe(true)
    // deltas are the final summary only, after the last map step
    const deltas = events.flatMap((e, i) => (e.type === 'delta' ? [{ text: e.text, at: i }] : []))
    expect(deltas.length).toBeGreaterThan(0)
    const lastMap = events.findIndex((e) => e.type === 'progress' && e.done === e.total - 1)
    expect(deltas[0].at).toBeGreaterThan(lastMap)
    expect(result.message).toMatchObject({ role: 'assistant', status: 'complete', content: deltas.map((d) => d.text).join('').trim() })
    expect(result.message.content.length).toBeGreaterThan(0)
    // stats over every step: more prompt tokens than one context holds
    expect(result.message.stats).toMatchObject({ model: 'stories260K.bin', generatedTokens: expect.any(Number) })
    expect(result.message.stats?.promptTokens).toBeGreaterThan(512)
    expect(result.message.stats?.ttftMs).toBeGreaterThan(0)
    const detail = await f.ok<ConversationDetail>('conversations:get', result.conversationId)
    expect(detail.document).toMatchObject({ name: 'stories.pdf', type: 'pdf', bytes: PDF.byteLength })
    // the running header and page numbers were removed from the stored text
    expect(detail.document?.textChars).toBeGreaterThan(3000)
    expect(detail.messages.map((m) => [m.role, m.status])).toEqual([['user', 'complete'], ['assistant', 'complete']])
  })

  it('the same file again offers the stored summary; reuse: false summarizes anew', async () => {
    const again = await summarizeCall('renamed.pdf', PDF, true)
    expect(again.events).toEqual([])
    expect(again.outcome.ok && again.outcome.result).toMatchObject({ conversationId: summarizedId, reused: true, message: { status: 'complete' } })
    const fresh = await summarizeCall('stories.pdf', PDF, false)
    const result = fresh.outcome.ok ? (fresh.outcome.result as SummaryOutcome) : null
    expect(result?.reused).toBe(false)
    expect(result?.conversationId).not.toBe(summarizedId)
  })

  it('a follow-up question is answered with the passages of the file in its prompt', async () => {
    const question = 'What did the deer find under the bridge?'
    const { outcome } = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: summarizedId, content: question })
    const reply = outcome.ok ? (outcome.result as Message) : null
    expect(reply?.status).toBe('complete')
    expect(reply?.content.length).toBeGreaterThan(0)
    // the question alone is ~12 tokens; with its excerpts the prompt is over a hundred
    expect(reply?.stats?.promptTokens).toBeGreaterThan(100)
  })

  it('regenerating the summary runs the map-reduce again, with progress', async () => {
    const { outcome, events } = await streamCall(f.app, 'chat:regenerate', { requestId: requestId(), conversationId: (await freshSummary()).conversationId })
    expect(outcome.ok).toBe(true)
    expect(events.filter((e) => e.type === 'progress').length).toBeGreaterThanOrEqual(3)
  })

  it('a stop during the map ends it as stopped, and the next request runs', async () => {
    const id = requestId()
    let stopped: Promise<unknown> | null = null
    const { outcome, events } = await streamCall(
      f.app,
      'summaries:start',
      { requestId: id, fileName: 'stop.pdf', data: base64(writePdf(PAGES.slice(0, 8))), reuse: false },
      (e) => {
        if (stopped === null && e.type === 'progress' && e.done === 1) stopped = f.ok('chat:stop', id)
      }
    )
    expect(await stopped).toBe(true)
    const result = outcome.ok ? (outcome.result as SummaryOutcome) : null
    expect(result?.message.status).toBe('stopped')
    // no step after the stop
    expect(events.filter((e) => e.type === 'progress' && e.done > 1)).toEqual([])
    const conv = await f.conversation(8)
    const next = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' })
    expect(next.outcome.ok && (next.outcome.result as Message).status).toBe('complete')
  })

  it('a caller gone before the file is read: stopped, nothing created', async () => {
    const before = (await f.ok<ConversationSummary[]>('conversations:list')).length
    const gone = new AbortController()
    gone.abort()
    const { outcome } = await summarizeCall('gone.pdf', PDF, false, undefined, gone.signal)
    expect(outcome.ok ? null : outcome.error.name).toBe('StoppedError')
    expect((await f.ok<ConversationSummary[]>('conversations:list')).length).toBe(before)
  })

  it('bad files: a clear error each, and no conversation created', async () => {
    const before = (await f.ok<ConversationSummary[]>('conversations:list')).length
    const cases: [string, Uint8Array | string, string, RegExp][] = [
      ['binary.txt', new Uint8Array([0x50, 0x4b, 0, 0, 7, 8, 0, 1]), 'DocumentError', /not a text file/],
      ['empty.md', new Uint8Array(0), 'DocumentError', /empty/],
      ['setup.exe', new Uint8Array([1, 2, 3]), 'DocumentError', /\.exe files cannot be summarized/],
      ['locked.pdf', writePdf([['secret']], { encrypted: true }), 'DocumentError', /password-protected/],
      ['broken.pdf', new TextEncoder().encode('%PDF-1.4\nthis is not a pdf'), 'DocumentError', /not a readable PDF|damaged/],
      ['notes.txt', 'not base64!', 'ValidationError', /base64/]
    ]
    for (const [name, data, errorName, message] of cases) {
      const { outcome } = await streamCall(f.app, 'summaries:start', { requestId: requestId(), fileName: name, data: typeof data === 'string' ? data : base64(data), reuse: true })
      expect(outcome.ok ? null : [outcome.error.name, outcome.error.message]).toEqual([errorName, expect.stringMatching(message)])
    }
    // over the limit: refused from the length of its text, before decoding
    const huge = 'A'.repeat(Math.ceil((64 * 2 ** 20) / 3) * 4 + 4)
    const big = await streamCall(f.app, 'summaries:start', { requestId: requestId(), fileName: 'huge.txt', data: huge, reuse: true })
    expect(big.outcome.ok ? null : [big.outcome.error.name, big.outcome.error.message]).toEqual(['PayloadTooLargeError', expect.stringMatching(/huge\.txt is larger than 64 MiB/)])
    expect((await f.ok<ConversationSummary[]>('conversations:list')).length).toBe(before)
  })
})

/** A new summary of a short PDF (three pages), to regenerate. */
async function freshSummary(): Promise<SummaryOutcome> {
  const { outcome } = await summarizeCall('three.pdf', writePdf(PAGES.slice(0, 3)), false)
  if (!outcome.ok) throw new Error(outcome.error.message)
  return outcome.result as SummaryOutcome
}
