/**
 * Model folders holding hostile or changing files, through the real app: FIFOs and a /dev/zero link beside
 * models (listed with their reason, at once), links leading out of the folder or in a loop (nothing outside,
 * each model once), a folder too big to search (its problem shown), a model replaced at the same path (the
 * next reply uses the new weights), and replies that do not rescan the folders.
 */
import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MAX_SCAN_ENTRIES, scanModelFolder } from '../../main/services'
import type { Message, ModelEntry, ModelFolder } from '../../preload/api'
import { makeFifos } from '../helpers/fifo'
import { sharedModel, tempDir } from '../helpers/paths'
import { Rng } from '../fixtures/rng'
import { appFixture, streamCall, type AppFixture } from './app-fixture'

const scratch = tempDir('tandem-model-files-')
const fifos: { dispose(): void }[] = []
afterAll(() => {
  for (const f of fifos) f.dispose()
  scratch.dispose()
})

const MIB = 1 << 20

/** Writes a copy of a shared file (copied bytes, so it is writable, unlike a copy of the read-only original). */
function copy(relative: string, to: string): void {
  writeFileSync(to, readFileSync(sharedModel(relative)))
}

/** A copy of TinyStories-656K in `dir`, without the files in `leaveOut`. */
function hfCopy(dir: string, leaveOut: readonly string[] = []): void {
  mkdirSync(dir, { recursive: true })
  for (const f of ['config.json', 'generation_config.json', 'model.safetensors', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']) {
    if (!leaveOut.includes(f)) copy(`tinystories-656K/${f}`, join(dir, f))
  }
}

function byName(models: readonly ModelEntry[]): Map<string, ModelEntry> {
  return new Map(models.map((m) => [m.path.slice(scratch.dir.length + 1), m]))
}

describe.skipIf(process.platform === 'win32')('hostile files beside models', () => {
  it('lists models whose tokenizer is a FIFO or /dev/zero with the reason, promptly, and without reading them', async () => {
    const root = join(scratch.dir, 'hostile')
    hfCopy(join(root, 'hf-fifo'), ['tokenizer.json'])
    hfCopy(join(root, 'hf-zero'), ['tokenizer.json'])
    symlinkSync('/dev/zero', join(root, 'hf-zero', 'tokenizer.json'))
    // a llama2.c checkpoint whose only tokenizer is a FIFO
    mkdirSync(join(root, 'bin-fifo'))
    copy('stories260K/stories260K.bin', join(root, 'bin-fifo', 'stories.bin'))
    // a FIFO sorted before the real tokenizer: it is passed over, the real one is used
    mkdirSync(join(root, 'bin-both'))
    copy('stories260K/stories260K.bin', join(root, 'bin-both', 'stories.bin'))
    copy('stories260K/tok512.bin', join(root, 'bin-both', 'tok512.bin'))
    fifos.push(makeFifos([join(root, 'hf-fifo', 'tokenizer.json'), join(root, 'bin-fifo', 'tok512.bin'), join(root, 'bin-both', 'tok000.bin')]))
    const f = appFixture({ modelDirs: [root] })
    try {
      const before = process.memoryUsage()
      const models = byName(await f.ok<ModelEntry[]>('models:list'))
      const after = process.memoryUsage()
      expect([...models.keys()].sort()).toEqual(['hostile/bin-both/stories.bin', 'hostile/bin-fifo/stories.bin', 'hostile/hf-fifo', 'hostile/hf-zero'])
      expect(models.get('hostile/hf-fifo')?.problem).toMatch(/tokenizer\.json: the tokenizer is not a regular file \(a FIFO\)/)
      expect(models.get('hostile/hf-zero')?.problem).toMatch(/tokenizer\.json: the tokenizer is not a regular file \(a character device\)/)
      expect(models.get('hostile/bin-fifo/stories.bin')?.problem).toMatch(/tok512\.bin: the tokenizer is not a regular file \(a FIFO\)/)
      expect(models.get('hostile/bin-both/stories.bin')).toMatchObject({ problem: null, architecture: 'llama' })
      // /dev/zero was never read into memory (it grew the process to 8 GB before)
      expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(100 * MIB)
      expect(after.rss - before.rss).toBeLessThan(100 * MIB)
      // picking the broken model for a reply gives its reason, not a hang
      const conv = await f.ok<{ id: string }>('conversations:create', { modelId: join(root, 'hf-fifo') })
      const { outcome } = await streamCall(f.app, 'chat:send', { requestId: 'r1', conversationId: conv.id, content: 'Hi' })
      expect(outcome.ok).toBe(false)
      if (!outcome.ok) expect(outcome.error.message).toMatch(/not a regular file \(a FIFO\)/)
    } finally {
      await f.dispose()
    }
  })

  it('never follows a link out of the folder, and lists each model once whatever the links', async () => {
    const outer = join(scratch.dir, 'outer')
    const root = join(outer, 'models')
    mkdirSync(join(root, 'a'), { recursive: true })
    copy('stories260K/stories260K.gguf', join(outer, 'outside.gguf'))
    copy('stories260K/stories260K.gguf', join(root, 'top.gguf'))
    copy('stories260K/stories260K.gguf', join(root, 'a', 'inner.gguf'))
    symlinkSync('..', join(root, 'parent')) // models/parent -> outer
    symlinkSync('/etc', join(root, 'etc'))
    symlinkSync('../outside.gguf', join(root, 'linked-out.gguf'))
    symlinkSync('..', join(root, 'a', 'loop')) // models/a/loop -> models
    symlinkSync('top.gguf', join(root, 'again.gguf')) // a second name for top.gguf
    const scan = await scanModelFolder(root)
    // listed under its own name, not the link's
    expect(scan.candidates.map((c) => c.path.slice(root.length + 1))).toEqual(['top.gguf', 'a/inner.gguf'])
    expect(scan.candidates.map((c) => c.realPath)).toEqual([join(root, 'top.gguf'), join(root, 'a', 'inner.gguf')])
    expect(scan.problem).toBeNull()

    // a second folder that is a link into the first: its model is already listed
    symlinkSync(join(root, 'a'), join(outer, 'a-link'))
    const f = appFixture({ modelDirs: [root, join(outer, 'a-link')] })
    try {
      const models = await f.ok<ModelEntry[]>('models:list')
      expect(models.map((m) => m.name)).toEqual(['top.gguf', 'inner.gguf'])
    } finally {
      await f.dispose()
    }
  })

  it('shows why a folder could not be searched fully', async () => {
    const root = join(scratch.dir, 'huge')
    mkdirSync(root)
    copy('stories260K/stories260K.gguf', join(root, 'aaa.gguf'))
    for (let i = 0; i < MAX_SCAN_ENTRIES; i++) writeFileSync(join(root, `f${i}`), '')
    const f = appFixture({ modelDirs: [root] })
    try {
      const folders = await f.ok<ModelFolder[]>('models:folders')
      const huge = folders.find((x) => x.path === root)
      expect(huge?.problem).toMatch(/more than 20,000 files and folders/)
    } finally {
      await f.dispose()
    }
  })
})

describe('model files changed behind our back', () => {
  /** Chats once in a new conversation on `modelId`; the reply's text. */
  async function reply(f: AppFixture, modelId: string): Promise<string> {
    const conv = await f.ok<{ id: string }>('conversations:create', { modelId, sampling: { temperature: 0, topP: 1, maxTokens: 12 } })
    const { outcome } = await streamCall(f.app, 'chat:send', { requestId: `r-${conv.id}`, conversationId: conv.id, content: 'Once upon a time' })
    if (!outcome.ok) throw new Error(`${outcome.error.name}: ${outcome.error.message}`)
    // Test-side narrowing of our own app's reply.
    return (outcome.result as Message).content
  }

  it('does not rescan the folders per reply, and reopens a model replaced at the same path', async () => {
    const dir = join(scratch.dir, 'replaced')
    mkdirSync(dir)
    const model = join(dir, 'stories.bin')
    const original = readFileSync(sharedModel('stories260K/stories260K.bin'))
    writeFileSync(model, original)
    copy('stories260K/tok512.bin', join(dir, 'tok512.bin'))
    // the same model with its weights perturbed (seeded): same size, other replies
    const changed = Buffer.from(original)
    const weights = new Float32Array(changed.buffer, changed.byteOffset + 28, (changed.byteLength - 28) / 4)
    const rng = new Rng(7)
    for (let i = 0; i < weights.length; i++) weights[i] *= 1 + 0.5 * (rng.uniform() * 2 - 1)

    const f = appFixture({ modelDirs: [dir] })
    try {
      await f.ok<ModelEntry[]>('models:list')
      const scans = f.app.models.scanCount
      const first = await reply(f, model)
      expect(await reply(f, model)).toBe(first)
      expect(f.app.models.scanCount).toBe(scans)

      writeFileSync(model, changed)
      // the mtime is set, not waited for: a later one however fast the machine
      const later = new Date(statSync(model).mtimeMs + 10_000)
      utimesSync(model, later, later)
      const afterChange = await reply(f, model)

      // what a fresh app says with the new file
      const fresh = appFixture({ modelDirs: [dir] })
      try {
        expect(afterChange).toBe(await reply(fresh, model))
      } finally {
        await fresh.dispose()
      }
      expect(afterChange).not.toBe(first)
      // the change was noticed by one rescan, and the listing shows the new file
      expect(f.app.models.scanCount).toBe(scans + 1)
      const listed = (await f.ok<ModelEntry[]>('models:list')).find((m) => m.path === model)
      expect(Math.round(listed?.modifiedMs ?? 0)).toBe(later.getTime())
    } finally {
      await f.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
