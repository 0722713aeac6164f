/**
 * @file Model downloads against a hub the test runs on loopback (Hugging Face's shape: a HEAD of resolve/ that
 * redirects LFS files with X-Linked-Etag/X-Linked-Size, range requests on the CDN URL): a whole download, checked;
 * a transfer cut halfway that resumes with a range request (and the half file is never listed as a model); a server
 * that ignores ranges; one that announces another length or sends more than it announced; a corrupted file (the
 * checksum catches it and the part is deleted); not enough disk space; a pause (abort) and resume; git-hashed small
 * files; an unreachable hub, a missing file, a gated model.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DownloadError, downloadCatalogModel, downloadFile, hubFile, parseCatalog, partPath, readCatalog, type CatalogModel, type DownloadProgress } from '../../main/services/downloads'
import { repoRoot } from '../helpers/paths'
import { scanModelFolder } from '../../main/services/model-scan'
import { tempDir } from '../helpers/paths'
import { gitSha1, sha256, SLOW_BYTES, startLoopbackHub, type LoopbackHub } from '../helpers/loopback-hub'

/** 1 MiB of seeded bytes starting like a GGUF file. */
const MODEL = Buffer.alloc(1024 * 1024)
for (let i = 0; i < MODEL.length; i++) MODEL[i] = (i * 2654435761) >>> 24
MODEL.write('GGUF', 0)
const MODEL_SHA256 = sha256(MODEL)
const CONFIG = Buffer.from('{"model_type": "llama"}\n')
const CONFIG_SHA1 = gitSha1(CONFIG)

let server: LoopbackHub
let hub = ''
const scratch = tempDir('tandem-downloads-')

/** A small safetensors-named file for the folder model (the scan only looks at names). */
const SAFETENSORS = Buffer.alloc(256 * 1024, 7)

beforeAll(async () => {
  server = await startLoopbackHub(
    {
      'org/model/model.gguf': { data: MODEL, lfs: true },
      'org/model/config.json': { data: CONFIG, lfs: false },
      'org/folder/config.json': { data: CONFIG, lfs: false },
      'org/folder/model.safetensors': { data: SAFETENSORS, lfs: true }
    },
    ['org/gated']
  )
  hub = server.url
})
afterAll(async () => {
  await server.close()
  scratch.dispose()
})

let n = 0
let dest = ''
beforeEach(() => {
  server.mode = 'ok'
  server.ranges.length = 0
  dest = join(scratch.dir, `model-${++n}.gguf`)
})

const plenty = async (): Promise<number> => 1e12
const remote = () => hubFile('org/model', 'model.gguf', { hub })

describe('model downloads', () => {
  it('the hub says where a file is and what it hashes to (LFS sha256, git sha1), or why not', async () => {
    expect(await remote()).toEqual({ url: `${hub}/org/model/resolve/main/model.gguf`, bytes: MODEL.length, digest: { algorithm: 'sha256', hex: MODEL_SHA256 } })
    expect(await hubFile('org/model', 'config.json', { hub })).toMatchObject({ bytes: CONFIG.length, digest: { algorithm: 'git-sha1', hex: CONFIG_SHA1 } })
    await expect(hubFile('org/model', 'missing.gguf', { hub })).rejects.toThrow(/missing\.gguf is not in org\/model/)
    await expect(hubFile('org/gated', 'model.gguf', { hub })).rejects.toThrow(/needs a sign-in/)
    await expect(hubFile('org/model', '../../etc/passwd', { hub })).rejects.toThrow(DownloadError)
    await expect(hubFile('org/model', 'model.gguf', { hub: 'http://127.0.0.1:1' })).rejects.toThrow(/Could not reach 127\.0\.0\.1:1/)
  })

  it('downloads, checks and places a file; progress ends at the total; no part is left', async () => {
    const seen: DownloadProgress[] = []
    const r = await downloadFile(await remote(), dest, { freeBytes: plenty, onProgress: (p) => seen.push(p) })
    expect(r).toEqual({ path: dest, bytes: MODEL.length, resumedFrom: 0 })
    expect(readFileSync(dest).equals(MODEL)).toBe(true)
    expect(existsSync(partPath(dest))).toBe(false)
    expect(seen.at(-1)).toEqual({ received: MODEL.length, total: MODEL.length })
    for (let i = 1; i < seen.length; i++) expect(seen[i].received).toBeGreaterThan(seen[i - 1].received)
    // a small git file, checked by its blob sha1
    const config = join(scratch.dir, `config-${n}.json`)
    await downloadFile(await hubFile('org/model', 'config.json', { hub }), config, { freeBytes: plenty })
    expect(readFileSync(config).equals(CONFIG)).toBe(true)
  })

  it('a transfer cut halfway resumes from the part with a range request; the half file is never a model', async () => {
    server.mode = 'drop-half'
    await expect(downloadFile(await remote(), dest, { freeBytes: plenty })).rejects.toThrow(/resumes from there/)
    const half = statSync(partPath(dest)).size
    expect(half).toBeGreaterThan(0)
    expect(half).toBeLessThan(MODEL.length)
    expect(existsSync(dest)).toBe(false)
    expect((await scanModelFolder(scratch.dir)).candidates.filter((c) => c.path.includes(`model-${n}`))).toEqual([])
    server.mode = 'ok'
    const r = await downloadFile(await remote(), dest, { freeBytes: plenty })
    expect(r.resumedFrom).toBe(half)
    expect(server.ranges.at(-1)).toBe(`bytes=${half}-`)
    expect(readFileSync(dest).equals(MODEL)).toBe(true)
  })

  it('a server that ignores the range starts over, and the file is still right', async () => {
    writeFileSync(partPath(dest), MODEL.subarray(0, 1000))
    server.mode = 'ignore-range'
    const r = await downloadFile(await remote(), dest, { freeBytes: plenty })
    expect(r.resumedFrom).toBe(0)
    expect(readFileSync(dest).equals(MODEL)).toBe(true)
  })

  it('a server that announces another length, or sends more than it announced, is refused', async () => {
    server.mode = 'lie-length'
    await expect(downloadFile(await remote(), dest, { freeBytes: plenty })).rejects.toThrow(/announces \d+ bytes where \d+ were expected/)
    server.mode = 'send-more'
    await expect(downloadFile(await remote(), dest, { freeBytes: plenty })).rejects.toThrow(/sent more than the \d+ bytes/)
    expect(existsSync(dest)).toBe(false)
  })

  it('a corrupted file fails the checksum: deleted, never placed', async () => {
    server.mode = 'corrupt'
    await expect(downloadFile(await remote(), dest, { freeBytes: plenty })).rejects.toThrow(/does not match the hub's checksum .*deleted/)
    expect(existsSync(dest)).toBe(false)
    expect(existsSync(partPath(dest))).toBe(false)
  })

  it('not enough disk space: refused before a request', async () => {
    const before = server.ranges.length
    await expect(downloadFile(await remote(), dest, { freeBytes: async () => 100 * 1024 * 1024 })).rejects.toThrow(/Not enough disk space/)
    expect(server.ranges.length).toBe(before)
  })

  it('a pause (abort) keeps the part; the download resumes from it', async () => {
    server.mode = 'slow'
    const controller = new AbortController()
    const pausing = downloadFile(await remote(), dest, {
      freeBytes: plenty,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.received >= SLOW_BYTES) controller.abort()
      }
    })
    await expect(pausing).rejects.toMatchObject({ name: 'AbortError' })
    const kept = statSync(partPath(dest)).size
    expect(kept).toBe(SLOW_BYTES)
    server.mode = 'ok'
    const r = await downloadFile(await remote(), dest, { freeBytes: plenty })
    expect(r.resumedFrom).toBe(kept)
    expect(readFileSync(dest).equals(MODEL)).toBe(true)
  })

  it('the shipped catalog reads, with the families the issue names, each with size, memory and license', async () => {
    const models = await readCatalog(join(repoRoot, 'resources', 'model-catalog.json'))
    const names = models.map((m) => m.name).join(' | ')
    for (const family of ['Qwen2.5 0.5B', 'Qwen2.5 1.5B', 'Qwen2.5 3B', 'Llama 3.2 1B', 'Llama 3.2 3B', 'Phi-3.5 mini', 'SmolLM2 1.7B']) expect(names).toContain(family)
    for (const m of models) expect(m.license.length * m.memoryBytes * m.approxBytes).toBeGreaterThan(0)
    const entry = (patch: Record<string, unknown>): string => JSON.stringify({ version: 1, models: [{ ...JSON.parse(JSON.stringify(models[0])), ...patch }] })
    expect(() => parseCatalog(entry({ files: ['../../etc/passwd'] }))).toThrow(/not a file path inside the repository/)
    expect(() => parseCatalog(entry({ files: ['a.gguf', 'b.gguf'] }))).toThrow(/one \.gguf file/)
    expect(() => parseCatalog(entry({ repo: 'no-owner' }))).toThrow(/owner\/name/)
    expect(() => parseCatalog(JSON.stringify({ version: 2, models: [] }))).toThrow(/version 1/)
    expect(() => parseCatalog(JSON.stringify({ version: 1, models: [models[0], models[0]] }))).toThrow(/appears twice/)
  })

  it('a folder model is placed only when every file is whole: a paused download is never listed', async () => {
    const folder: CatalogModel = { id: 'folder-model', name: 'Folder model', repo: 'org/folder', files: ['config.json', 'model.safetensors'], format: 'hf', parameters: 1, quantization: null, approxBytes: 1, memoryBytes: 1, license: 'MIT' }
    const modelsDir = join(scratch.dir, `models-${n}`)
    server.mode = 'slow'
    const controller = new AbortController()
    const paused = downloadCatalogModel(folder, modelsDir, { hub, freeBytes: plenty, signal: controller.signal, onModelProgress: (p) => p.received > CONFIG.length && controller.abort() })
    await expect(paused).rejects.toMatchObject({ name: 'AbortError' })
    expect((await scanModelFolder(modelsDir)).candidates).toEqual([])
    server.mode = 'ok'
    const totals: number[] = []
    const placed = await downloadCatalogModel(folder, modelsDir, { hub, freeBytes: plenty, onModelProgress: (p) => totals.push(p.total) })
    expect(placed).toBe(join(modelsDir, 'folder-model'))
    expect(readFileSync(join(placed, 'model.safetensors')).equals(SAFETENSORS)).toBe(true)
    expect(new Set(totals)).toEqual(new Set([CONFIG.length + SAFETENSORS.length]))
    expect((await scanModelFolder(modelsDir)).candidates.map((c) => [c.path, c.format])).toEqual([[placed, 'hf']])
    await expect(downloadCatalogModel(folder, modelsDir, { hub, freeBytes: plenty })).rejects.toThrow(/already exists/)
  })
})
