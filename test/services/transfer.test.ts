/**
 * Export and import of conversations (issue #16) through the API host on real SQLite files: a round trip (a branch,
 * a summarized file, replies with stats, a stopped and a failed reply) into a fresh app exports the same JSON again;
 * importing twice skips every duplicate; a deleted conversation comes back from its export; a branch exported
 * without its parent loses the link; malformed files are ValidationErrors naming the field and import nothing; the
 * Markdown names titles, messages and stats.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_LIMITS, type Conversation, type ConversationDetail, type ConversationSummary, type ImportResult, type Message, type SearchHit } from '../../preload/api'
import type { ImportedConversation, ImportedMessage, MessageStats } from '../../main/store'
import { appFixture, type AppFixture } from './app-fixture'

/** The stats of a reply as the chat service stores them, every optional field set. */
const FULL_STATS: MessageStats = {
  ttftMs: 42.5,
  prefillTokensPerSec: 1234.5,
  decodeTokensPerSec: 87.25,
  promptTokens: 30,
  generatedTokens: 12,
  model: 'stories260K.bin',
  devices: ['cpu'],
  deviceBusy: [{ id: 'cpu', name: 'CPU', busyMs: 180 }],
  reusedTokens: 20,
  restoredTokens: 16
}
const SHORT_STATS: MessageStats = { ttftMs: 1500, prefillTokensPerSec: 300, decodeTokensPerSec: 150, promptTokens: 50, generatedTokens: 3, model: 'tiny.gguf', devices: ['cpu', 'webgpu-0'] }

const DOCUMENT_TEXT = 'Page one of the report. The ferry to Zanzibar leaves at noon.'

/** The conversations of the source app, by role. */
interface Seeded {
  trip: Conversation
  branch: Conversation
  report: Conversation
  empty: Conversation
}

/** Fills an app with what an export must carry: system prompt, stats, stopped and failed replies, a branch, a file. */
async function seed(f: AppFixture): Promise<Seeded> {
  const { store } = f.app
  const trip = await f.ok<Conversation>('conversations:create', {
    title: 'Trip plans',
    systemPrompt: 'Be brief.\nAnswer in English.',
    modelId: '/models/tiny.gguf',
    sampling: { temperature: 0.2, topP: 0.9, maxTokens: 64 }
  })
  store.messages.append({ conversationId: trip.id, role: 'user', content: 'Where should we go in spring?' })
  const answer = store.messages.append({ conversationId: trip.id, role: 'assistant', content: 'Lisbon: **mild** and sunny.', stats: FULL_STATS })
  store.messages.append({ conversationId: trip.id, role: 'user', content: 'And after that?' })
  store.messages.append({ conversationId: trip.id, role: 'assistant', content: 'Por', status: 'stopped', stats: SHORT_STATS })
  store.messages.append({ conversationId: trip.id, role: 'user', content: 'Hello?' })
  store.messages.append({ conversationId: trip.id, role: 'assistant', content: '', status: 'error', error: 'The model could not be loaded.' })
  const branch = await f.ok<Conversation>('conversations:branch', trip.id, answer.id)
  store.messages.append({ conversationId: branch.id, role: 'user', content: 'What about Porto instead?' })

  const report = await f.ok<Conversation>('conversations:create', { title: 'report.pdf' })
  store.documents.attach(report.id, { name: 'report.pdf', type: 'pdf', bytes: 48_213, sha256: createHash('sha256').update('the pdf bytes').digest('hex'), text: DOCUMENT_TEXT })
  store.messages.append({ conversationId: report.id, role: 'assistant', content: 'A report about ferries.', stats: SHORT_STATS })

  const empty = await f.ok<Conversation>('conversations:create', { title: '' })
  return { trip, branch, report, empty }
}

/** A JSON export without its time stamp (the one field that differs between two exports of the same data). */
function withoutTime(json: string): unknown {
  const parsed: unknown = JSON.parse(json)
  if (typeof parsed !== 'object' || parsed === null) throw new Error('not an object')
  return { ...parsed, exportedAtMs: 0 }
}

/** The parsed file, loosely typed for edits by the tests. */
type Loose = Record<string, unknown> & { conversations: (Record<string, unknown> & { messages: Record<string, unknown>[] })[] }

let source: AppFixture
let target: AppFixture
let seeded: Seeded
let exported: string

beforeAll(async () => {
  source = appFixture({ modelDirs: [] })
  target = appFixture({ modelDirs: [] })
  seeded = await seed(source)
  exported = await source.ok<string>('conversations:export', null, 'json')
})
afterAll(async () => {
  await source.dispose()
  await target.dispose()
})

describe('JSON export', () => {
  it('writes the versioned file with every conversation, its messages, stats, branch link and file', () => {
    const file = JSON.parse(exported) as Loose
    expect(file).toMatchObject({ format: 'tandem-conversations', version: 1, exportedAtMs: expect.any(Number) })
    expect(Object.keys(file)).toEqual(['format', 'version', 'exportedAtMs', 'conversations'])
    const byId = new Map(file.conversations.map((c) => [c.id, c]))
    expect(file.conversations).toHaveLength(4)
    expect(byId.get(seeded.trip.id)).toMatchObject({
      title: 'Trip plans',
      systemPrompt: 'Be brief.\nAnswer in English.',
      modelId: '/models/tiny.gguf',
      sampling: { temperature: 0.2, topP: 0.9, maxTokens: 64 },
      parentId: null,
      branchSeq: null,
      document: null
    })
    const trip = byId.get(seeded.trip.id)
    expect(trip?.messages.map((m) => [m.role, m.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'complete'],
      ['user', 'complete'],
      ['assistant', 'stopped'],
      ['user', 'complete'],
      ['assistant', 'error']
    ])
    expect(trip?.messages[1]).toMatchObject({ seq: 1, content: 'Lisbon: **mild** and sunny.', error: null, stats: FULL_STATS })
    expect(trip?.messages[5]).toMatchObject({ error: 'The model could not be loaded.', stats: null })
    expect(byId.get(seeded.branch.id)).toMatchObject({ parentId: seeded.trip.id, branchSeq: 1, title: 'Trip plans (branch)' })
    expect(byId.get(seeded.report.id)?.document).toEqual({
      name: 'report.pdf',
      type: 'pdf',
      bytes: 48_213,
      sha256: createHash('sha256').update('the pdf bytes').digest('hex'),
      createdAtMs: expect.any(Number),
      text: DOCUMENT_TEXT
    })
  })

  it('exports chosen conversations, and refuses unknown or deleted ones', async () => {
    const one = JSON.parse(await source.ok<string>('conversations:export', [seeded.report.id, seeded.report.id], 'json')) as Loose
    expect(one.conversations.map((c) => c.id)).toEqual([seeded.report.id])
    expect(await source.call('conversations:export', ['no-such-id'], 'json')).toMatchObject({ ok: false, error: { name: 'NotFoundError' } })
    const gone = await source.ok<Conversation>('conversations:create', { title: 'Gone' })
    await source.ok('conversations:remove', gone.id)
    expect(await source.call('conversations:export', [gone.id], 'markdown')).toMatchObject({ ok: false, error: { name: 'NotFoundError', message: expect.stringMatching(/deleted/) } })
    expect(JSON.parse(await source.ok<string>('conversations:export', null, 'json')).conversations).toHaveLength(4)
  })
})

describe('import', () => {
  it('round trip: a fresh app imports everything and exports the same JSON again', async () => {
    const result = await target.ok<ImportResult>('conversations:import', exported)
    expect(result.duplicates).toEqual([])
    expect(result.imported.map((c) => c.id).sort()).toEqual(Object.values(seeded).map((c: Conversation) => c.id).sort())
    expect(withoutTime(await target.ok<string>('conversations:export', null, 'json'))).toEqual(withoutTime(exported))

    // listed with their own times, the branch under its parent, the file and the stats kept
    const byId = (list: ConversationSummary[]): ConversationSummary[] => [...list].sort((a, b) => (a.id < b.id ? -1 : 1))
    expect(byId(await target.ok<ConversationSummary[]>('conversations:list'))).toEqual(byId(await source.ok<ConversationSummary[]>('conversations:list')))
    const detail = await target.ok<ConversationDetail>('conversations:get', seeded.report.id)
    expect(detail.document).toMatchObject({ name: 'report.pdf', type: 'pdf', bytes: 48_213, textChars: DOCUMENT_TEXT.length })
    expect(target.app.store.documents.text(seeded.report.id)).toBe(DOCUMENT_TEXT)
    const trip = await target.ok<ConversationDetail>('conversations:get', seeded.trip.id)
    expect(trip.messages.map((m) => m.stats)).toEqual((await source.ok<ConversationDetail>('conversations:get', seeded.trip.id)).messages.map((m) => m.stats))
    expect((await target.ok<ConversationDetail>('conversations:get', seeded.branch.id)).conversation.parentId).toBe(seeded.trip.id)
  })

  it('imported messages and titles are found by search', async () => {
    const byMessage = await target.ok<SearchHit[]>('conversations:search', 'lisbon')
    expect(byMessage.map((h) => h.conversationId)).toContain(seeded.trip.id)
    const byTitle = await target.ok<SearchHit[]>('conversations:search', 'trip plans')
    expect(byTitle.filter((h) => h.messageId === null).map((h) => h.conversationId).sort()).toEqual([seeded.trip.id, seeded.branch.id].sort())
    // the stopped reply is indexed too
    expect((await target.ok<SearchHit[]>('conversations:search', 'por')).some((h) => h.messageId !== null && h.conversationId === seeded.trip.id)).toBe(true)
  })

  it('importing the same file again skips every conversation as a duplicate and changes nothing', async () => {
    const before = await target.ok<string>('conversations:export', null, 'json')
    const result = await target.ok<ImportResult>('conversations:import', exported)
    expect(result.imported).toEqual([])
    expect(result.duplicates.map((d) => d.title).sort()).toEqual(['', 'Trip plans', 'Trip plans (branch)', 'report.pdf'])
    expect(withoutTime(await target.ok<string>('conversations:export', null, 'json'))).toEqual(withoutTime(before))
  })

  it('a deleted conversation is brought back by importing its export, and its branch stays linked', async () => {
    await target.ok('conversations:remove', seeded.trip.id)
    // the deleted copy is changed meanwhile: the file's copy replaces it
    target.app.store.messages.append({ conversationId: seeded.trip.id, role: 'user', content: 'written after the export' })
    const result = await target.ok<ImportResult>('conversations:import', exported)
    expect(result.imported.map((c) => c.id)).toEqual([seeded.trip.id])
    expect(result.duplicates).toHaveLength(3)
    const trip = await target.ok<ConversationDetail>('conversations:get', seeded.trip.id)
    expect(trip.messages.map((m) => m.content)).not.toContain('written after the export')
    expect(trip.messages).toHaveLength(6)
    expect((await target.ok<ConversationDetail>('conversations:get', seeded.branch.id)).conversation.parentId).toBe(seeded.trip.id)
    expect(withoutTime(await target.ok<string>('conversations:export', null, 'json'))).toEqual(withoutTime(exported))
  })

  it('a branch imported without its parent stands alone; a reply still streaming imports as stopped', async () => {
    const lone = appFixture({ modelDirs: [] })
    try {
      const file = JSON.parse(await source.ok<string>('conversations:export', [seeded.branch.id], 'json')) as Loose
      const reply = file.conversations[0]?.messages[1]
      if (reply === undefined) throw new Error('the branch has no reply')
      reply.status = 'streaming'
      const result = await lone.ok<ImportResult>('conversations:import', JSON.stringify(file))
      expect(result.imported).toMatchObject([{ id: seeded.branch.id, parentId: null }])
      const detail = await lone.ok<ConversationDetail>('conversations:get', seeded.branch.id)
      expect(detail.messages.map((m: Message) => m.status)).toEqual(['complete', 'stopped', 'complete'])
    } finally {
      await lone.dispose()
    }
  })
})

describe('malformed files', () => {
  let empty: AppFixture
  beforeAll(() => {
    empty = appFixture({ modelDirs: [] })
  })
  afterAll(() => empty.dispose())

  /** The export, parsed, changed by `edit`, and serialized again. */
  const edited = (edit: (file: Loose) => void): string => {
    const file = JSON.parse(exported) as Loose
    edit(file)
    return JSON.stringify(file)
  }
  /** The first message of the first conversation with several (conversations are in creation order, ties by id). */
  const firstMessage = (file: Loose): Record<string, unknown> => {
    const m = file.conversations.find((c) => c.messages.length > 1)?.messages[0]
    if (m === undefined) throw new Error('no message')
    return m
  }
  const deep = `{"format":"tandem-conversations","version":1,"exportedAtMs":1,"conversations":[{"id":${'['.repeat(10_000)}${']'.repeat(10_000)}}]}`

  const CASES: Array<[string, () => string, RegExp]> = [
    ['not JSON', () => 'hello, this is not json', /not valid JSON/],
    ['JSON of another kind', () => '[1, 2, 3]', /not a Tandem conversations file/],
    ['another format', () => edited((f) => (f.format = 'chatgpt-export')), /not a Tandem conversations file/],
    ['a newer version', () => edited((f) => (f.version = 2)), /version 2 .*newer Tandem; this one reads version 1/],
    ['a version that is not a number', () => edited((f) => (f.version = '1')), /"version" must be 1, got "1"/],
    ['a message with role robot', () => edited((f) => (firstMessage(f).role = 'robot')), /conversations\[\d\]\.messages\[0\]\.role: "robot" is not one of system, user, assistant/],
    ['an unknown status', () => edited((f) => (firstMessage(f).status = 'thinking')), /messages\[0\]\.status: "thinking" is not one of/],
    ['a title over the limit', () => edited((f) => ((f.conversations[1] ?? {}).title = 'T'.repeat(API_LIMITS.maxTitleChars + 1))), /conversations\[1\]\.title: 501 characters is more than the limit of 500/],
    ['a huge message', () => edited((f) => (firstMessage(f).content = 'x'.repeat(API_LIMITS.maxMessageChars + 1))), /messages\[0\]\.content: 1000001 characters is more than the limit of 1000000/],
    ['deeply nested junk', () => deep, /nests arrays and objects deeper than 16 levels/],
    ['nested junk in a number', () => edited((f) => ((f.conversations[0] ?? {}).sampling = { temperature: { a: [1] }, topP: 1, maxTokens: 5 })), /sampling\.temperature: expected a finite number, got an object/],
    ['an infinite stat', () => exported.replace('"ttftMs": 42.5', '"ttftMs": 1e400'), /stats\.ttftMs: expected a finite number, got Infinity/],
    ['a negative stat', () => exported.replace('"ttftMs": 42.5', '"ttftMs": -3'), /stats\.ttftMs: -3 is out of range/],
    ['an unknown field', () => edited((f) => ((f.conversations[0] ?? {}).colour = 'blue')), /conversations\[0\]: unknown field "colour"/],
    ['a missing field', () => edited((f) => delete firstMessage(f).seq), /messages\[0\]: missing field "seq"/],
    ['a conversation twice', () => edited((f) => f.conversations.push(f.conversations[0] ?? {})), /conversations\[4\]\.id: ".*" appears more than once in the file/],
    ['messages out of order', () => edited((f) => (firstMessage(f).seq = 99)), /messages\[1\]\.seq: \d+ does not come after the previous message's 99/],
    ['a malformed sha256', () => exported.replace(/"sha256": "[0-9a-f]+"/, '"sha256": "ABC"'), /document\.sha256: expected 64 lower-case hex digits/],
    ['an unknown document type', () => exported.replace('"type": "pdf"', '"type": "exe"'), /document\.type: "exe" is not one of text, markdown/],
    ['a time that is not an integer', () => edited((f) => (firstMessage(f).createdAtMs = 1.5)), /messages\[0\]\.createdAtMs: expected an integer, got 1\.5/]
  ]

  it.each(CASES)('%s is a ValidationError and imports nothing', async (_name, make, message) => {
    const outcome = await empty.call('conversations:import', make())
    expect(outcome).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(message) } })
    expect(await empty.ok<ConversationSummary[]>('conversations:list')).toEqual([])
  })

  it('a file over the size limit is refused before it is read, counted in UTF-8 bytes', async () => {
    const tooLong = await empty.call('conversations:import', 'x'.repeat(API_LIMITS.maxImportBytes + 1))
    expect(tooLong).toMatchObject({ ok: false, error: { name: 'PayloadTooLargeError', message: expect.stringMatching(/larger than 64 MiB/) } })
    // fewer characters than the limit, but two bytes each
    const wide = await empty.call('conversations:import', 'é'.repeat(API_LIMITS.maxImportBytes / 2 + 1))
    expect(wide).toMatchObject({ ok: false, error: { name: 'PayloadTooLargeError' } })
  })

})

describe('the store', () => {
  let f: AppFixture
  beforeAll(() => {
    f = appFixture({ modelDirs: [] })
  })
  afterAll(() => f.dispose())

  const conversation = (id: string, messages: ImportedMessage[], parentId: string | null = null): ImportedConversation => ({
    id,
    title: id,
    systemPrompt: '',
    modelId: null,
    sampling: {},
    createdAtMs: 1_700_000_000_000,
    updatedAtMs: 1_700_000_000_000,
    parentId,
    branchSeq: parentId === null ? null : 0,
    messages,
    document: null
  })
  const reply = (id: string, stats: MessageStats | null = null): ImportedMessage => ({ id, seq: 0, role: 'assistant', content: `reply ${id}`, status: 'complete', error: null, createdAtMs: 1, updatedAtMs: 2, stats })

  it('a failure inside the transaction rolls the whole file back', () => {
    // past the file checks (the store is called directly): a stat the store refuses, in the second conversation
    expect(() => f.app.store.imports.importAll([conversation('first', [reply('m1')]), conversation('second', [reply('m2', { ...FULL_STATS, ttftMs: Number.NaN })])])).toThrow(
      /ttftMs must be a finite number/
    )
    expect(f.app.store.conversations.get('first')).toBeUndefined()
    expect(f.app.store.messages.get('m1')).toBeUndefined()
  })

  it('a message id used by another conversation gets a new one; parents that loop are cut once', () => {
    expect(f.app.store.imports.importAll([conversation('a', [reply('shared')], 'b'), conversation('b', [], 'a')])).toEqual({ imported: ['a', 'b'], duplicates: [] })
    expect(f.app.store.imports.importAll([conversation('c', [reply('shared')])])).toEqual({ imported: ['c'], duplicates: [] })
    const [copied] = f.app.store.messages.list('c')
    expect(copied?.id).not.toBe('shared')
    expect(copied?.content).toBe('reply shared')
    // a names b as its parent and b names a: the first link is kept, the one closing the loop is dropped
    expect([f.app.store.conversations.get('a')?.parentId, f.app.store.conversations.get('b')?.parentId]).toEqual(['b', null])
  })
})

describe('Markdown export', () => {
  it('has the titles, a model and date line, each message under its author, stats lines, the branch and the file', async () => {
    const md = await source.ok<string>('conversations:export', null, 'markdown')
    expect(md).toContain('# Trip plans\n')
    expect(md).toMatch(/\*Model: tiny\.gguf · started \d{4}-\d\d-\d\d \d\d:\d\d UTC · last changed \d{4}-\d\d-\d\d \d\d:\d\d UTC\*/)
    expect(md).toContain('**System prompt**\n\n> Be brief.\n> Answer in English.')
    expect(md).toContain('### You\n\nWhere should we go in spring?')
    expect(md).toContain('### Assistant\n\nLisbon: **mild** and sunny.\n\n*12 tokens · 87.3 tok/s · first token after 43 ms · stories260K.bin on CPU*')
    expect(md).toContain('### Assistant\n\nPor\n\n*3 tokens · 150 tok/s · first token after 1.5 s · tiny.gguf on CPU + webgpu-0*\n\n*Stopped before the end.*')
    expect(md).toContain('*Error: The model could not be loaded.*')
    expect(md).toContain('# Trip plans (branch)\n')
    expect(md).toContain('*A branch of “Trip plans”.*')
    expect(md).toContain('*A summary of the file report.pdf (pdf, 48.2 KB).*')
    expect(md).toContain('# Untitled chat\n')
    // one rule between each two conversations
    expect(md.split('\n---\n')).toHaveLength(4)
  })

  it('one conversation alone, a branch whose parent is not exported', async () => {
    const md = await source.ok<string>('conversations:export', [seeded.branch.id], 'markdown')
    expect(md.startsWith('# Trip plans (branch)\n')).toBe(true)
    expect(md).toContain('*A branch of “Trip plans”.*')
    expect(md).toContain('What about Porto instead?')
    expect(md).not.toContain('\n---\n')
  })
})
