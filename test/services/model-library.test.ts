/**
 * @file The model library through the app's dispatcher, on real files and the real engine: the catalog downloaded
 * from a loopback hub (the shared stories260K.gguf as its LFS file) into Tandem's own models folder, listed and
 * chatted with; a download held by the hub, paused (its bytes kept, not listed), joined by a second caller, and
 * resumed with a range request; an unreachable hub and a file the hub lacks (clear DownloadErrors); model files
 * added one by one (a valid one kept, a truncated GGUF or a non-model refused with the loader's reason and nothing
 * stored); and Remove (forget an added file, delete a downloaded model, refuse one of another folder).
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { DispatchOutcome } from '../../main/services'
import type { CatalogModelView, DownloadEvent, Message, ModelCatalog, ModelEntry, Settings } from '../../preload/api'
import { startTinyModelHub, TINY_MODEL, type LoopbackHub } from '../helpers/loopback-hub'
import { sharedModel, sharedModels, tempDir } from '../helpers/paths'
import { appFixture, streamCall, type AppFixture } from './app-fixture'

const scratch = tempDir('tandem-library-')
let hub: LoopbackHub
let catalogFile = ''
let f: AppFixture
/** Tandem's own models folder in the fixture's home */
let ownDir = ''
let nextId = 0
const requestId = (): string => `dl-${++nextId}`

beforeAll(async () => {
  const started = await startTinyModelHub(scratch.dir, [
    { id: 'not-on-hub', name: 'Not on the hub', repo: 'tandem-test/nothing', files: ['nothing.gguf'], format: 'gguf', parameters: 1, quantization: null, approxBytes: 1, memoryBytes: 1, license: 'MIT' }
  ])
  hub = started.hub
  catalogFile = started.catalogFile
  f = appFixture({ modelDirs: [], hubUrl: hub.url, modelCatalogFile: catalogFile })
  ownDir = f.app.paths.ownModelsDir
})
afterAll(async () => {
  await f.dispose()
  await hub.close()
  scratch.dispose()
})
beforeEach(() => {
  hub.mode = 'ok'
})

const tiny = async (app: AppFixture = f): Promise<CatalogModelView> => {
  const m = (await app.ok<ModelCatalog>('models:catalog')).models.find((x) => x.id === TINY_MODEL.id)
  if (m === undefined) throw new Error('the tiny model is not in the catalog')
  return m
}
/** models:download through the dispatcher, collecting its progress events. */
async function download(catalogId: string, onEvent: (e: DownloadEvent) => void = () => undefined, app: AppFixture = f): Promise<{ outcome: DispatchOutcome; events: DownloadEvent[] }> {
  const events: DownloadEvent[] = []
  const emit = (e: unknown): void => {
    // the app's own events, typed by the contract
    const event = e as DownloadEvent
    events.push(event)
    onEvent(event)
  }
  const outcome = await app.app.dispatch('models:download', [{ requestId: requestId(), catalogId }], { emit, signal: new AbortController().signal })
  return { outcome, events }
}
const dest = (): string => join(ownDir, TINY_MODEL.fileName)

describe('the model catalog', () => {
  it('downloads a model into the own folder: progress to the total, installed, listed, and a chat reply works with it; Remove deletes it', async () => {
    const before = await f.ok<ModelCatalog>('models:catalog')
    expect(before.totalMemoryBytes).toBeGreaterThan(0)
    expect(before.models.map((m) => m.id)).toEqual([TINY_MODEL.id, 'not-on-hub'])
    const size = statSync(sharedModel('stories260K/stories260K.gguf')).size
    expect(before.models[0]).toEqual({
      id: TINY_MODEL.id,
      name: TINY_MODEL.name,
      repo: TINY_MODEL.repo,
      format: 'gguf',
      parameters: 292_800,
      quantization: 'F32',
      sizeBytes: size,
      memoryBytes: 16_000_000,
      license: 'MIT',
      state: { kind: 'available' },
      error: null
    })

    const { outcome, events } = await download(TINY_MODEL.id)
    if (!outcome.ok) throw new Error(outcome.error.message)
    const entry = outcome.result as ModelEntry
    expect(entry).toMatchObject({ id: dest(), name: TINY_MODEL.fileName, origin: 'own-folder', format: 'gguf', architecture: 'llama', problem: null, sizeBytes: size })
    expect(events.at(-1)).toEqual({ type: 'progress', receivedBytes: size, totalBytes: size })
    for (let i = 1; i < events.length; i++) expect(events[i].receivedBytes).toBeGreaterThanOrEqual(events[i - 1].receivedBytes)
    expect(readFileSync(dest()).equals(readFileSync(sharedModel('stories260K/stories260K.gguf')))).toBe(true)
    expect((await tiny()).state).toEqual({ kind: 'installed', modelId: dest() })
    expect((await f.ok<ModelEntry[]>('models:list')).map((m) => m.id)).toEqual([dest()])
    // downloading it again gives the installed model without asking the hub
    const requests = hub.ranges.length
    const again = await download(TINY_MODEL.id)
    expect(again.outcome).toMatchObject({ ok: true, result: { id: dest() } })
    expect(hub.ranges.length).toBe(requests)

    // it can be picked and chatted with
    await f.ok<Settings>('settings:update', { defaultModelId: dest() })
    const conv = await f.ok<{ id: string }>('conversations:create', { modelId: dest(), sampling: { temperature: 0, topP: 1, maxTokens: 12 } })
    const reply = await streamCall(f.app, 'chat:send', { requestId: requestId(), conversationId: conv.id, content: 'Once upon a time' })
    if (!reply.outcome.ok) throw new Error(reply.outcome.error.message)
    expect(reply.outcome.result as Message).toMatchObject({ role: 'assistant', status: 'complete', stats: { model: TINY_MODEL.fileName } })
    expect((reply.outcome.result as Message).content.length).toBeGreaterThan(0)

    // Remove deletes a downloaded model from the disk; it is no longer the default
    expect(await f.ok<ModelEntry[]>('models:remove', dest())).toEqual([])
    expect(existsSync(dest())).toBe(false)
    expect((await f.ok<Settings>('settings:get')).defaultModelId).toBeNull()
    expect((await tiny()).state).toEqual({ kind: 'available' })
  })

  it('a held download pauses with its bytes kept (not listed), a second caller joins it, and downloading again resumes it with a range request', async () => {
    hub.mode = 'hold'
    let joined: ReturnType<typeof download> | null = null
    let resolveHeld: () => void = () => undefined
    const held = new Promise<void>((r) => (resolveHeld = r))
    const first = download(TINY_MODEL.id, (e) => {
      if (e.receivedBytes > 0) resolveHeld()
    })
    await held
    expect((await tiny()).state).toMatchObject({ kind: 'downloading', receivedBytes: expect.any(Number), totalBytes: statSync(sharedModel('stories260K/stories260K.gguf')).size })
    joined = download(TINY_MODEL.id)
    const paused = await f.ok<CatalogModelView>('models:pauseDownload', TINY_MODEL.id)
    expect(paused.state).toMatchObject({ kind: 'paused' })
    const kept = paused.state.kind === 'paused' ? paused.state.receivedBytes : 0
    expect(kept).toBeGreaterThan(0)
    expect(statSync(`${dest()}.part`).size).toBe(kept)
    for (const call of [await first, await joined]) expect(call.outcome).toMatchObject({ ok: false, error: { name: 'StoppedError', message: expect.stringMatching(/paused/) } })
    expect(existsSync(dest())).toBe(false)
    expect(await f.ok<ModelEntry[]>('models:list')).toEqual([])
    expect(await tiny()).toMatchObject({ state: { kind: 'paused', receivedBytes: kept }, error: null })

    const ranges = hub.ranges.length
    const resumed = await download(TINY_MODEL.id)
    expect(resumed.outcome).toMatchObject({ ok: true, result: { id: dest(), problem: null } })
    expect(resumed.events[0].receivedBytes).toBe(kept)
    expect(hub.ranges.slice(ranges)).toEqual([`bytes=${kept}-`])
    expect(existsSync(`${dest()}.part`)).toBe(false)
    await f.ok('models:remove', dest())
  })

  it('Cancel discards a paused download (its kept bytes deleted) and stops a running one; downloading again starts from the first byte', async () => {
    hub.mode = 'hold'
    let resolveHeld: () => void = () => undefined
    const held = new Promise<void>((r) => (resolveHeld = r))
    const first = download(TINY_MODEL.id, (e) => {
      if (e.receivedBytes > 0) resolveHeld()
    })
    await held
    expect((await f.ok<CatalogModelView>('models:pauseDownload', TINY_MODEL.id)).state.kind).toBe('paused')
    expect(existsSync(`${dest()}.part`)).toBe(true)
    expect(await f.ok<CatalogModelView>('models:cancelDownload', TINY_MODEL.id)).toMatchObject({ state: { kind: 'available' }, error: null })
    expect(existsSync(`${dest()}.part`)).toBe(false)
    expect((await first).outcome).toMatchObject({ ok: false, error: { name: 'StoppedError' } })
    // a running one: cancelled without a pause first
    const resolveRunning: { done: () => void } = { done: () => undefined }
    const running = new Promise<void>((r) => (resolveRunning.done = r))
    const second = download(TINY_MODEL.id, (e) => {
      if (e.receivedBytes > 0) resolveRunning.done()
    })
    await running
    expect((await f.ok<CatalogModelView>('models:cancelDownload', TINY_MODEL.id)).state).toEqual({ kind: 'available' })
    expect((await second).outcome).toMatchObject({ ok: false })
    expect(existsSync(`${dest()}.part`)).toBe(false)
    hub.mode = 'ok'
    const ranges = hub.ranges.length
    expect((await download(TINY_MODEL.id)).outcome).toMatchObject({ ok: true, result: { id: dest() } })
    // no range: it started over
    expect(hub.ranges.slice(ranges)).toEqual([undefined])
    await f.ok('models:remove', dest())
  })

  it('an unreachable hub, and a file the hub does not have, fail with a clear DownloadError shown in the catalog', async () => {
    const missing = await download('not-on-hub')
    expect(missing.outcome).toMatchObject({ ok: false, error: { name: 'DownloadError', message: 'nothing.gguf is not in tandem-test/nothing at main.' } })
    const offline = appFixture({ modelDirs: [], hubUrl: 'http://127.0.0.1:1', modelCatalogFile: catalogFile })
    try {
      const { outcome } = await download(TINY_MODEL.id, undefined, offline)
      expect(outcome).toMatchObject({ ok: false, error: { name: 'DownloadError', message: expect.stringMatching(/^Could not reach 127\.0\.0\.1:1 \(offline\?\)/) } })
      expect(await tiny(offline)).toMatchObject({ state: { kind: 'available' }, error: expect.stringMatching(/Could not reach/) })
    } finally {
      await offline.dispose()
    }
    expect(await f.call('models:download', { requestId: requestId(), catalogId: 'no-such-model' })).toMatchObject({ ok: false, error: { name: 'NotFoundError' } })
  })
})

describe('model files added one by one', () => {
  it('a valid file is added and listed; a truncated GGUF and a non-model are refused with the reason and nothing is stored; Remove forgets it', async () => {
    const files = join(scratch.dir, 'files')
    mkdirSync(files, { recursive: true })
    const good = join(files, 'good.gguf')
    copyFileSync(sharedModel('stories260K/stories260K.gguf'), good)
    const added = await f.ok<ModelEntry>('models:addFile', good)
    expect(added).toMatchObject({ id: good, origin: 'added-file', folder: files, architecture: 'llama', problem: null })
    expect((await f.ok<Settings>('settings:get')).modelFiles).toEqual([good])
    expect((await f.ok<ModelEntry[]>('models:list')).map((m) => m.id)).toEqual([good])

    // a truncated copy: refused with what the loader says of it (the same reason a folder scan lists it with)
    const broken = join(scratch.dir, 'broken', 'broken.gguf')
    mkdirSync(join(scratch.dir, 'broken'))
    writeFileSync(broken, readFileSync(good).subarray(0, 600_000))
    const refused = await f.call('models:addFile', broken)
    expect(refused).toMatchObject({ ok: false, error: { name: 'ModelError', message: expect.stringMatching(/^broken\.gguf cannot be used: /) } })
    const scanned = appFixture({ modelDirs: [join(scratch.dir, 'broken')] })
    try {
      const problem = (await scanned.ok<ModelEntry[]>('models:list'))[0]?.problem ?? ''
      expect(problem.length).toBeGreaterThan(5)
      expect(refused.ok ? '' : refused.error.message).toBe(`broken.gguf cannot be used: ${problem}`)
    } finally {
      await scanned.dispose()
    }
    const text = join(files, 'notes.txt')
    writeFileSync(text, 'not a model')
    expect(await f.call('models:addFile', text)).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(/not a model file/) } })
    expect(await f.call('models:addFile', join(files, 'missing.gguf'))).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(/File not found/) } })
    expect(await f.call('models:addFile', 'relative.gguf')).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(/full path/) } })
    expect((await f.ok<Settings>('settings:get')).modelFiles).toEqual([good])

    // a file that went away is listed with why, so it can be removed; Remove forgets it and leaves files alone
    const second = join(files, 'second.gguf')
    copyFileSync(good, second)
    await f.ok('models:addFile', second)
    rmSync(second)
    const gone = (await f.ok<ModelEntry[]>('models:list')).find((m) => m.id === second)
    expect(gone).toMatchObject({ origin: 'added-file', problem: expect.stringMatching(/File not found/) })
    expect((await f.ok<ModelEntry[]>('models:remove', second)).map((m) => m.id)).toEqual([good])
    expect((await f.ok<ModelEntry[]>('models:remove', good))).toEqual([])
    expect(existsSync(good)).toBe(true)
    expect((await f.ok<Settings>('settings:get')).modelFiles).toEqual([])
  })

  it('a model found in another models folder is not removed: its folder is', async () => {
    const shared = appFixture()
    try {
      const model = sharedModel('stories260K/stories260K.gguf')
      expect((await shared.ok<ModelEntry[]>('models:list')).find((m) => m.id === model)?.origin).toBe('folder')
      // adding a file already listed keeps nothing new
      expect(await shared.ok<ModelEntry>('models:addFile', model)).toMatchObject({ id: model, origin: 'folder' })
      expect((await shared.ok<Settings>('settings:get')).modelFiles).toEqual([])
      expect(await shared.call('models:remove', model)).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringContaining(`found in the models folder ${sharedModels}`) } })
      expect(existsSync(model)).toBe(true)
      expect(await shared.call('models:remove', join(scratch.dir, 'never-listed.gguf'))).toMatchObject({ ok: false, error: { name: 'NotFoundError' } })
    } finally {
      await shared.dispose()
    }
  })
})
