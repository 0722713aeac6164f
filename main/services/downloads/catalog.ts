/**
 * @file The curated catalog of models to download (resources/model-catalog.json), read without trusting it, and
 * the download of one catalog model into a models folder. A GGUF model is one file, placed when it is whole and
 * checked (download.ts). A Hugging Face model is a folder of files: they are downloaded into a hidden
 * `.<id>.downloading` folder, and the folder is renamed to its name only when every file is checked, so the model
 * list never shows a model with a file missing.
 */
import { mkdir, readFile, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { isRecord, readArray, readChoice, readInteger, readText, type Fail } from '../../common/reader'
import { downloadFile, type DownloadOptions, type RemoteFile } from './download'
import { DownloadError } from './errors'
import { hubFile, isHubFile, isHubRepo, type HubOptions } from './hub'

/** One model of the catalog. */
export interface CatalogModel {
  /** stable id; also the folder name of a Hugging Face model */
  readonly id: string
  readonly name: string
  readonly repo: string
  /** for 'gguf' one file; for 'hf' the folder's files */
  readonly files: readonly string[]
  readonly format: 'gguf' | 'hf'
  readonly parameters: number
  readonly quantization: string | null
  /** the download's size as the catalog knows it (the hub's own is checked at download time) */
  readonly approxBytes: number
  /** memory it needs to run, roughly */
  readonly memoryBytes: number
  readonly license: string
}

/** Largest catalog file read (bytes). */
export const MAX_CATALOG_BYTES = 1024 * 1024
/** Most models in a catalog, files in a model. */
export const MAX_CATALOG_MODELS = 200
export const MAX_MODEL_FILES = 64

const ID = /^[a-z0-9][a-z0-9._-]{0,99}$/

/** A catalog id: lower-case letters, digits, '.', '_' and '-', at most 100 characters. */
export function isCatalogId(id: string): boolean {
  return ID.test(id)
}
const FORMATS: readonly CatalogModel['format'][] = ['gguf', 'hf']

function failCatalog(path: string, detail: string): never {
  throw new DownloadError(`model catalog: ${path}: ${detail}`)
}
const fail: Fail = failCatalog

function catalogModel(value: unknown, path: string): CatalogModel {
  if (!isRecord(value)) fail(path, 'expected an object')
  const id = readText(fail, `${path}.id`, value.id, 100)
  if (!ID.test(id)) fail(`${path}.id`, 'lower-case letters, digits, ".", "_" and "-" only')
  const repo = readText(fail, `${path}.repo`, value.repo, 200)
  if (!isHubRepo(repo)) fail(`${path}.repo`, 'expected owner/name')
  const files = readArray(fail, `${path}.files`, value.files, MAX_MODEL_FILES, 1).map((f, i) => {
    const file = readText(fail, `${path}.files[${i}]`, f, 500)
    if (!isHubFile(file)) fail(`${path}.files[${i}]`, 'not a file path inside the repository')
    return file
  })
  const format = readChoice(fail, `${path}.format`, value.format, FORMATS)
  if (format === 'gguf' && (files.length !== 1 || !files[0].toLowerCase().endsWith('.gguf'))) fail(`${path}.files`, 'a GGUF model is one .gguf file')
  if (format === 'hf' && !(files.includes('config.json') && files.some((f) => f.endsWith('.safetensors')))) fail(`${path}.files`, 'a Hugging Face model needs config.json and .safetensors files')
  return {
    id,
    name: readText(fail, `${path}.name`, value.name, 200),
    repo,
    files,
    format,
    parameters: readInteger(fail, `${path}.parameters`, value.parameters, 1, Number.MAX_SAFE_INTEGER),
    quantization: value.quantization === null ? null : readText(fail, `${path}.quantization`, value.quantization, 40),
    approxBytes: readInteger(fail, `${path}.approxBytes`, value.approxBytes, 1, Number.MAX_SAFE_INTEGER),
    memoryBytes: readInteger(fail, `${path}.memoryBytes`, value.memoryBytes, 1, Number.MAX_SAFE_INTEGER),
    license: readText(fail, `${path}.license`, value.license, 200)
  }
}

/** The catalog's models from its JSON text; DownloadError naming the field when it is malformed. */
export function parseCatalog(text: string): CatalogModel[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    fail('', 'not JSON')
  }
  if (!isRecord(value) || value.version !== 1) fail('version', 'expected version 1')
  const models = readArray(fail, 'models', value.models, MAX_CATALOG_MODELS).map((m, i) => catalogModel(m, `models[${i}]`))
  const ids = new Set<string>()
  for (const m of models) {
    if (ids.has(m.id)) fail('models', `the id ${m.id} appears twice`)
    ids.add(m.id)
  }
  return models
}

/** Reads the catalog file. */
export async function readCatalog(file: string): Promise<CatalogModel[]> {
  const s = await stat(file)
  if (s.size > MAX_CATALOG_BYTES) fail('', `larger than ${MAX_CATALOG_BYTES} bytes`)
  return parseCatalog(await readFile(file, 'utf8'))
}

/** Where a catalog model lands in `modelsDir`: its .gguf file, or its folder. */
export function catalogDestination(model: CatalogModel, modelsDir: string): string {
  return model.format === 'gguf' ? join(modelsDir, model.files[0].split('/').pop() ?? model.files[0]) : join(modelsDir, model.id)
}

/** The hidden folder a Hugging Face model's files are downloaded into before it is renamed into place. */
export function stagingDir(model: CatalogModel, modelsDir: string): string {
  return join(modelsDir, `.${model.id}.downloading`)
}

/** Progress over all of a model's files. */
export interface CatalogProgress {
  readonly file: string
  readonly received: number
  readonly total: number
}

/**
 * Downloads a catalog model into `modelsDir` (resuming what a paused or cut download left) and resolves with where
 * it landed. The hub is asked for every file's size first, so progress has a total and the disk check covers the
 * whole model.
 */
export async function downloadCatalogModel(
  model: CatalogModel,
  modelsDir: string,
  options: DownloadOptions & Pick<HubOptions, 'hub' | 'revision'> & { readonly onModelProgress?: (p: CatalogProgress) => void } = {}
): Promise<string> {
  const dest = catalogDestination(model, modelsDir)
  if (await stat(dest).then(() => true, () => false)) throw new DownloadError(`${dest} already exists: ${model.name} is in the models folder (remove it there first to download it again).`)
  await mkdir(modelsDir, { recursive: true })
  const hubOptions: HubOptions = { hub: options.hub, revision: options.revision, signal: options.signal, fetch: options.fetch }
  const remotes: { file: string; remote: RemoteFile }[] = []
  for (const file of model.files) remotes.push({ file, remote: await hubFile(model.repo, file, hubOptions) })
  const total = remotes.reduce((n, r) => n + r.remote.bytes, 0)
  if (model.format === 'gguf') {
    await downloadFile(remotes[0].remote, dest, { ...options, onProgress: (p) => options.onModelProgress?.({ file: remotes[0].file, received: p.received, total }) })
    return dest
  }
  const staging = stagingDir(model, modelsDir)
  let done = 0
  for (const { file, remote } of remotes) {
    const target = join(staging, ...file.split('/'))
    await mkdir(join(target, '..'), { recursive: true })
    const already = await stat(target).then((s) => s.size === remote.bytes, () => false)
    if (!already) await downloadFile(remote, target, { ...options, onProgress: (p) => options.onModelProgress?.({ file, received: done + p.received, total }) })
    done += remote.bytes
    options.onModelProgress?.({ file, received: done, total })
  }
  await rename(staging, dest)
  return dest
}
