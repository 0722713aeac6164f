/**
 * Model discovery on real files: the shared trained models, a corrupt copy, tokenizer files that are not
 * models, nested and hidden folders, and folders that are missing or disappear.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { scanModelFolder } from '../../main/services'
import type { ModelEntry, ModelFolder } from '../../preload/api'
import { sharedModel, sharedModels, tempDir } from '../helpers/paths'
import { appFixture } from './app-fixture'

const scratch = tempDir('tandem-models-')
afterAll(() => scratch.dispose())

describe('model scan', () => {
  it('finds the shared models, describes them, and skips tokenizer files', async () => {
    const f = appFixture()
    try {
      const models = await f.ok<ModelEntry[]>('models:list')
      const byName = new Map(models.map((m) => [m.name, m]))
      expect([...byName.keys()]).toEqual(expect.arrayContaining(['stories260K.bin', 'stories260K_q80.bin', 'stories260K.gguf', 'tinystories-656K']))
      expect(byName.has('tok512.bin')).toBe(false)
      const bin = byName.get('stories260K.bin')
      expect(bin).toMatchObject({
        id: sharedModel('stories260K/stories260K.bin'),
        format: 'llama2c',
        folder: sharedModels,
        sizeBytes: 1_056_540,
        architecture: 'llama',
        // the README's count of learned parameters
        parameters: 260_032,
        contextLength: 512,
        hasChatTemplate: false,
        problem: null
      })
      expect(byName.get('stories260K.gguf')).toMatchObject({ format: 'gguf', architecture: 'llama', problem: null })
      expect(byName.get('stories260K_q80.bin')?.quantization).toMatch(/Q8_0/)
      expect(byName.get('tinystories-656K')).toMatchObject({ format: 'hf', parameters: 656_000, problem: null })
    } finally {
      await f.dispose()
    }
  })

  it('lists a corrupt copy with a problem instead of failing', async () => {
    const dir = join(scratch.dir, 'corrupt')
    mkdirSync(dir, { recursive: true })
    const gguf = readFileSync(sharedModel('stories260K/stories260K.gguf'))
    writeFileSync(join(dir, 'broken.gguf'), gguf.subarray(0, 4000))
    const bin = readFileSync(sharedModel('stories260K/stories260K.bin'))
    writeFileSync(join(dir, 'short.bin'), bin.subarray(0, 50_000))
    copyFileSync(sharedModel('stories260K/tok512.bin'), join(dir, 'tok512.bin'))
    const f = appFixture({ modelDirs: [dir] })
    try {
      const models = await f.ok<ModelEntry[]>('models:list')
      expect(models.map((m) => m.name).sort()).toEqual(['broken.gguf', 'short.bin'])
      for (const m of models) {
        expect(m.problem, m.name).toEqual(expect.any(String))
        expect(m.problem?.length).toBeGreaterThan(5)
        expect(m.architecture).toBeNull()
      }
    } finally {
      await f.dispose()
    }
  })

  it('looks into nested folders but not hidden ones, and treats a HF folder as one model', async () => {
    const root = join(scratch.dir, 'tree')
    mkdirSync(join(root, 'a', 'b'), { recursive: true })
    mkdirSync(join(root, '.hidden'), { recursive: true })
    copyFileSync(sharedModel('stories260K/stories260K.gguf'), join(root, 'a', 'b', 'deep.gguf'))
    copyFileSync(sharedModel('stories260K/stories260K.gguf'), join(root, '.hidden', 'secret.gguf'))
    // a .bin without a tokenizer beside it is not taken for a llama2.c checkpoint
    writeFileSync(join(root, 'a', 'data.bin'), Buffer.alloc(64))
    const found = await scanModelFolder(root)
    expect(found.candidates.map((c) => c.path)).toEqual([join(root, 'a', 'b', 'deep.gguf')])
    expect(found.problem).toBeNull()
    const hf = (await scanModelFolder(sharedModel('tinystories-656K'))).candidates
    expect(hf).toHaveLength(1)
    expect(hf[0]).toMatchObject({ format: 'hf', path: sharedModel('tinystories-656K') })
  })
})

describe('model folders', () => {
  it('adds and removes folders, persisted, and reports a missing one without crashing', async () => {
    const dir = join(scratch.dir, 'folders')
    const added = join(dir, 'added')
    mkdirSync(added, { recursive: true })
    copyFileSync(sharedModel('stories260K/stories260K.gguf'), join(added, 'copy.gguf'))
    const appDir = join(dir, 'app')
    let f = appFixture({ modelDirs: [], dir: appDir })
    try {
      const before = await f.ok<ModelFolder[]>('models:folders')
      // the default user folder (<home>/Tandem/models) is built in and does not exist in the temp home
      expect(before).toEqual([{ path: join(appDir, 'home', 'Tandem', 'models'), exists: false, builtIn: true, problem: null }])
      expect(await f.ok<ModelEntry[]>('models:list')).toEqual([])
      const after = await f.ok<ModelFolder[]>('models:addFolder', added)
      expect(after[1]).toEqual({ path: added, exists: true, builtIn: false, problem: null })
      expect((await f.ok<ModelEntry[]>('models:list')).map((m) => m.name)).toEqual(['copy.gguf'])
    } finally {
      await f.app.dispose()
    }
    // persisted in the database; then the folder disappears
    rmSync(added, { recursive: true })
    f = appFixture({ modelDirs: [], dir: appDir })
    try {
      const folders = await f.ok<ModelFolder[]>('models:folders')
      expect(folders[1]).toEqual({ path: added, exists: false, builtIn: false, problem: null })
      expect(await f.ok<ModelEntry[]>('models:list')).toEqual([])
      expect(await f.ok<ModelFolder[]>('models:removeFolder', added)).toHaveLength(1)
    } finally {
      await f.app.dispose()
    }
  })

  it('refuses a folder that does not exist, a relative path, and removing a built-in folder', async () => {
    const f = appFixture()
    try {
      const missing = await f.call('models:addFolder', join(scratch.dir, 'nope'))
      expect(missing).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(/not found/) } })
      const relative = await f.call('models:addFolder', 'models')
      expect(relative).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(/full path/) } })
      const builtIn = await f.call('models:removeFolder', sharedModels)
      expect(builtIn).toMatchObject({ ok: false, error: { name: 'ValidationError', message: expect.stringMatching(/built-in/) } })
      const unknown = await f.call('models:removeFolder', join(scratch.dir, 'never-added'))
      expect(unknown).toMatchObject({ ok: false, error: { name: 'NotFoundError' } })
    } finally {
      await f.dispose()
    }
  })
})
