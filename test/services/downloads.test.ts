/**
 * @file Model downloads against a hub the test runs on loopback (Hugging Face's shape: a HEAD of resolve/ that
 * redirects LFS files with X-Linked-Etag/X-Linked-Size, range requests on the CDN URL): a whole download, checked;
 * a transfer cut halfway that resumes with a range request (and the half file is never listed as a model); a server
 * that ignores ranges; one that announces another length or sends more than it announced; a corrupted file (the
 * checksum catches it and the part is deleted); not enough disk space; a pause (abort) and resume; git-hashed small
 * files; an unreachable hub, a missing file, a gated model.
 */
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DownloadError, downloadCatalogModel, downloadFile, hubFile, parseCatalog, partPath, readCatalog, type CatalogModel, type DownloadProgress } from '../../main/services/downloads'
import { repoRoot } from '../helpers/paths'
import { scanModelFolder } from '../../main/services/model-scan'
import { tempDir } from '../helpers/paths'

/** 1 MiB of seeded bytes starting like a GGUF file. */
const MODEL = Buffer.alloc(1024 * 1024)
for (let i = 0; i < MODEL.length; i++) MODEL[i] = (i * 2654435761) >>> 24
MODEL.write('GGUF', 0)
const MODEL_SHA256 = createHash('sha256').update(MODEL).digest('hex')
const CONFIG = Buffer.from('{"model_type": "llama"}\n')
const CONFIG_SHA1 = createHash('sha1').update(`blob ${CONFIG.length}\0`).update(CONFIG).digest('hex')

/** How the CDN misbehaves for the next GET. */
type Mode = 'ok' | 'drop-half' | 'ignore-range' | 'lie-length' | 'send-more' | 'corrupt' | 'slow'
let mode: Mode = 'ok'
const ranges: (string | undefined)[] = []
let server: Server
let hub = ''
const scratch = tempDir('tandem-downloads-')

/** A small safetensors-named file for the folder model (the scan only looks at names). */
const SAFETENSORS = Buffer.alloc(256 * 1024, 7)
/** Files the hub holds: LFS ones redirect to the CDN, git ones are served at resolve/. */
const FILES: Record<string, { data: Buffer; lfs: boolean }> = {
  'org/model/model.gguf': { data: MODEL, lfs: true },
  'org/model/config.json': { data: CONFIG, lfs: false },
  'org/folder/config.json': { data: CONFIG, lfs: false },
  'org/folder/model.safetensors': { data: SAFETENSORS, lfs: true }
}
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex')
const gitSha1 = (b: Buffer): string => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex')

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? ''
    const resolve = /^\/(\w+\/\w+)\/resolve\/main\/(.+)$/.exec(url)
    if (resolve !== null) {
      if (resolve[1] === 'org/gated') return res.writeHead(401).end()
      const file = FILES[`${resolve[1]}/${resolve[2]}`]
      if (file === undefined) return res.writeHead(404).end()
      if (file.lfs) {
        res.writeHead(302, { Location: `/cdn/${resolve[1]}/${resolve[2]}`, 'X-Linked-Etag': `"${sha256(file.data)}"`, 'X-Linked-Size': String(file.data.length) })
        return res.end()
      }
      res.writeHead(200, { ETag: `"${gitSha1(file.data)}"`, 'Content-Length': String(file.data.length) })
      return res.end(req.method === 'HEAD' ? undefined : file.data)
    }
    const cdn = FILES[url.replace(/^\/cdn\//, '')]
    if (!url.startsWith('/cdn/') || cdn === undefined) return res.writeHead(404).end()
    ranges.push(req.headers.range)
    const whole = cdn.data
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')
    const start = m !== null && mode !== 'ignore-range' ? Number(m[1]) : 0
    let body = whole.subarray(start)
    if (mode === 'corrupt') {
      body = Buffer.from(body)
      body[100] ^= 0xff
    }
    const headers: Record<string, string> = { 'Content-Type': 'application/octet-stream' }
    if (mode === 'lie-length') headers['Content-Length'] = String(body.length + 10)
    else if (mode !== 'send-more') headers['Content-Length'] = String(body.length)
    if (start > 0) headers['Content-Range'] = `bytes ${start}-${whole.length - 1}/${whole.length}`
    res.writeHead(start > 0 ? 206 : 200, headers)
    if (mode === 'drop-half') {
      // half the bytes, then the connection ends (FIN after they are sent: the client reads all of them first)
      res.write(body.subarray(0, body.length >> 1), () => res.socket?.end())
      return
    }
    if (mode === 'send-more') return res.end(Buffer.concat([body, Buffer.alloc(10)]))
    if (mode === 'slow') {
      // a chunk now, the rest never (until the client aborts)
      res.write(body.subarray(0, 64 * 1024))
      return
    }
    res.end(body)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  hub = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
  scratch.dispose()
})

let n = 0
let dest = ''
beforeEach(() => {
  mode = 'ok'
  ranges.length = 0
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
    mode = 'drop-half'
    await expect(downloadFile(await remote(), dest, { freeBytes: plenty })).rejects.toThrow(/resumes from there/)
    const half = statSync(partPath(dest)).size
    expect(half).toBeGreaterThan(0)
    expect(half).toBeLessThan(MODEL.length)
    expect(existsSync(dest)).toBe(false)
    expect((await scanModelFolder(scratch.dir)).candidates.filter((c) => c.path.includes(`model-${n}`))).toEqual([])
    mode = 'ok'
    const r = await downloadFile(await remote(), dest, { freeBytes: plenty })
    expect(r.resumedFrom).toBe(half)
    expect(ranges.at(-1)).toBe(`bytes=${half}-`)
    expect(readFileSync(dest).equals(MODEL)).toBe(true)
  })

  it('a server that ignores the range starts over, and the file is still right', async () => {
    writeFileSync(partPath(dest), MODEL.subarray(0, 1000))
    mode = 'ignore-range'
    const r = await downloadFile(await remote(), dest, { freeBytes: plenty })
    expect(r.resumedFrom).toBe(0)
    expect(readFileSync(dest).equals(MODEL)).toBe(true)
  })

  it('a server that announces another length, or sends more than it announced, is refused', async () => {
    mode = 'lie-length'
    await expect(downloadFile(await remote(), dest, { freeBytes: plenty })).rejects.toThrow(/announces \d+ bytes where \d+ were expected/)
    mode = 'send-more'
    await expect(downloadFile(await remote(), dest, { freeBytes: plenty })).rejects.toThrow(/sent more than the \d+ bytes/)
    expect(existsSync(dest)).toBe(false)
  })

  it('a corrupted file fails the checksum: deleted, never placed', async () => {
    mode = 'corrupt'
    await expect(downloadFile(await remote(), dest, { freeBytes: plenty })).rejects.toThrow(/does not match the hub's checksum .*deleted/)
    expect(existsSync(dest)).toBe(false)
    expect(existsSync(partPath(dest))).toBe(false)
  })

  it('not enough disk space: refused before a request', async () => {
    const before = ranges.length
    await expect(downloadFile(await remote(), dest, { freeBytes: async () => 100 * 1024 * 1024 })).rejects.toThrow(/Not enough disk space/)
    expect(ranges.length).toBe(before)
  })

  it('a pause (abort) keeps the part; the download resumes from it', async () => {
    mode = 'slow'
    const controller = new AbortController()
    const pausing = downloadFile(await remote(), dest, {
      freeBytes: plenty,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.received >= 64 * 1024) controller.abort()
      }
    })
    await expect(pausing).rejects.toMatchObject({ name: 'AbortError' })
    const kept = statSync(partPath(dest)).size
    expect(kept).toBe(64 * 1024)
    mode = 'ok'
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
    mode = 'slow'
    const controller = new AbortController()
    const paused = downloadCatalogModel(folder, modelsDir, { hub, freeBytes: plenty, signal: controller.signal, onModelProgress: (p) => p.received > CONFIG.length && controller.abort() })
    await expect(paused).rejects.toMatchObject({ name: 'AbortError' })
    expect((await scanModelFolder(modelsDir)).candidates).toEqual([])
    mode = 'ok'
    const totals: number[] = []
    const placed = await downloadCatalogModel(folder, modelsDir, { hub, freeBytes: plenty, onModelProgress: (p) => totals.push(p.total) })
    expect(placed).toBe(join(modelsDir, 'folder-model'))
    expect(readFileSync(join(placed, 'model.safetensors')).equals(SAFETENSORS)).toBe(true)
    expect(new Set(totals)).toEqual(new Set([CONFIG.length + SAFETENSORS.length]))
    expect((await scanModelFolder(modelsDir)).candidates.map((c) => [c.path, c.format])).toEqual([[placed, 'hf']])
    await expect(downloadCatalogModel(folder, modelsDir, { hub, freeBytes: plenty })).rejects.toThrow(/already exists/)
  })
})
