/**
 * @file Finding model files in a folder tree without opening them: GGUF files, llama2.c checkpoints (a
 * `.bin` with a `tok*.bin` tokenizer beside it; the tokenizer itself is not a model) and Hugging Face
 * folders (config.json + *.safetensors). The scan only lists and stats (never opens a file, so a FIFO
 * cannot block it), and a models folder is user content, so:
 * - links are followed only while they stay inside the chosen folder (its real path, resolved once): a
 *   `parent -> ..` or a link to /etc is skipped, never walked;
 * - every folder is visited once and every model listed once, by real path, so a link loop (`a/loop -> ..`)
 *   or a second link to the same file adds nothing;
 * - only regular files are candidates (FIFOs, devices and sockets never are);
 * - depth and entry count are bounded, so a huge tree (a home folder added by mistake) cannot stall the app.
 * An unreadable subfolder is skipped; an unreadable models folder, or one cut short by the entry budget,
 * comes back with its `problem`.
 */
import { lstat, readdir, realpath, stat } from 'node:fs/promises'
import type { Stats } from 'node:fs'
import { basename, dirname, join, sep } from 'node:path'
import { errorCode } from '../common/error-code'

/** How deep below a models folder we look: folder/org/model/file is depth 3. */
export const MAX_SCAN_DEPTH = 4

/** Directory entries visited per models folder before the scan stops (a home folder added by mistake). */
export const MAX_SCAN_ENTRIES = 20_000

/** A model found on disk, not yet opened. */
export interface ModelCandidate {
  /** the file, or the folder for Hugging Face models */
  readonly path: string
  /** the models folder it was found under */
  readonly folder: string
  readonly format: 'gguf' | 'llama2c' | 'hf'
  /** file size, or the folder's files added up */
  readonly sizeBytes: number
  /** newest modification time among its files; with sizeBytes it keys the description cache */
  readonly mtimeMs: number
  /** `path` with every link resolved: two candidates with the same real path are the same model */
  readonly realPath: string
}

/** One models folder scanned: what it holds, and why it could not be searched (fully), or null. */
export interface FolderScan {
  readonly candidates: ModelCandidate[]
  readonly problem: string | null
}

/** A llama2.c tokenizer file such as tok512.bin or tokenizer.bin. */
export function isTokenizerFile(name: string): boolean {
  return /^tok.*\.bin$/i.test(name)
}

/** Folders never descended into: hidden ones (.git, .cache) and package trees. */
function skipFolder(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules'
}

interface FileInfo {
  readonly name: string
  readonly path: string
  readonly realPath: string
  readonly sizeBytes: number
  readonly mtimeMs: number
  /** reached through a link below the models folder */
  readonly viaLink: boolean
}

/** The files of a Hugging Face folder that make up the model (weights, JSON, SentencePiece model). */
function isHfModelFile(name: string): boolean {
  const lower = name.toLowerCase()
  return lower.endsWith('.safetensors') || lower.endsWith('.json') || lower === 'tokenizer.model'
}

/** Size and newest mtime of a model's files, as the scan computes them (for an HF folder: its model files added up). */
function totals(files: readonly FileInfo[]): { sizeBytes: number; mtimeMs: number } {
  return { sizeBytes: files.reduce((sum, f) => sum + f.sizeBytes, 0), mtimeMs: Math.max(...files.map((f) => f.mtimeMs)) }
}

/**
 * lstat of `p`, following it only when it is a link whose real path is `inside` the models folder; null for
 * a link leading outside, a broken or looping link, or a raced deletion. realpath and stat read metadata
 * only: a link to a FIFO or a device is not opened here. `realIfNotLink` is `p`'s real path when it is no link.
 */
async function statEntry(p: string, realIfNotLink: string, inside: (real: string) => boolean): Promise<{ s: Stats; real: string; link: boolean } | null> {
  try {
    const s = await lstat(p)
    if (!s.isSymbolicLink()) return { s, real: realIfNotLink, link: false }
    const real = await realpath(p)
    return inside(real) ? { s: await stat(p), real, link: true } : null
  } catch {
    return null
  }
}

/** Whether a real path lies in the real folder `root` (or is it). */
function insideOf(root: string): (real: string) => boolean {
  const prefix = root.endsWith(sep) ? root : root + sep
  return (real) => real === root || real.startsWith(prefix)
}


/** Every model under `folder` (which may be a model folder itself), in path order, and the folder's problem if any. */
export async function scanModelFolder(folder: string): Promise<FolderScan> {
  let root: string
  try {
    root = await realpath(folder)
  } catch (e) {
    return { candidates: [], problem: `The folder cannot be read (${errorCode(e) ?? String(e)}).` }
  }
  const inside = insideOf(root)
  const found: ModelCandidate[] = []
  const visitedDirs = new Set<string>()
  /** real path -> index in `found` */
  const listed = new Map<string, number>()
  let budget = MAX_SCAN_ENTRIES
  let problem: string | null = null
  /** indexes in `found` of models reached through a link */
  const linked = new Set<number>()
  const add = (c: ModelCandidate, viaLink: boolean): void => {
    const at = listed.get(c.realPath)
    if (at === undefined) {
      const i = found.push(c) - 1
      listed.set(c.realPath, i)
      if (viaLink) linked.add(i)
    } else if (!viaLink && linked.has(at)) {
      // reached again under its own name after a link to it: list it by its own name
      found[at] = c
      linked.delete(at)
    }
  }
  /** `dir` as reached (links kept, so paths read as the user laid them out) and its real path. */
  const visit = async (dir: string, realDir: string, depth: number, dirViaLink: boolean): Promise<void> => {
    if (visitedDirs.has(realDir)) return
    visitedDirs.add(realDir)
    let names: string[]
    try {
      names = (await readdir(dir)).sort()
    } catch (e) {
      if (depth === 0) problem = `The folder cannot be read (${errorCode(e) ?? String(e)}).`
      return // an unreadable (permissions) or vanished subfolder: nothing to list
    }
    const files: FileInfo[] = []
    const otherNames: string[] = []
    const subdirs: { path: string; realPath: string; viaLink: boolean }[] = []
    for (const name of names) {
      if (budget-- <= 0) {
        problem = `It holds more than ${MAX_SCAN_ENTRIES.toLocaleString('en-US')} files and folders; only the first ones were searched. Add the folder that holds the models instead.`
        return
      }
      const p = join(dir, name)
      const entry = await statEntry(p, join(realDir, name), inside)
      if (entry === null) continue
      const { s, real } = entry
      const viaLink = dirViaLink || entry.link
      if (s.isFile()) files.push({ name, path: p, realPath: real, sizeBytes: s.size, mtimeMs: s.mtimeMs, viaLink })
      else if (s.isDirectory()) {
        if (!skipFolder(name)) subdirs.push({ path: p, realPath: real, viaLink })
      } else otherNames.push(name)
    }
    const lower = (f: FileInfo): string => f.name.toLowerCase()
    if (files.some((f) => lower(f).endsWith('.safetensors')) && files.some((f) => f.name === 'config.json')) {
      // A Hugging Face model folder; its subfolders (onnx/, original/) are variants, not more models.
      add({ path: dir, folder, format: 'hf', realPath: realDir, ...totals(files.filter((f) => isHfModelFile(f.name))) }, dirViaLink)
      return
    }
    // A tok*.bin that is not a regular file (a FIFO) still marks the folder as llama2.c's, so its checkpoints
    // are listed with the loader's reason instead of silently missing.
    const hasTokenizer = files.some((f) => isTokenizerFile(f.name)) || otherNames.some(isTokenizerFile)
    for (const f of files) {
      const format = lower(f).endsWith('.gguf') ? 'gguf' : lower(f).endsWith('.bin') && hasTokenizer && !isTokenizerFile(f.name) ? 'llama2c' : null
      if (format !== null) add({ path: f.path, folder, format, realPath: f.realPath, sizeBytes: f.sizeBytes, mtimeMs: f.mtimeMs }, f.viaLink)
    }
    if (depth >= MAX_SCAN_DEPTH) return
    for (const sub of subdirs) await visit(sub.path, sub.realPath, depth + 1, sub.viaLink)
  }
  await visit(folder, root, 0, false)
  return { candidates: found, problem }
}

/**
 * A listed model's size and newest mtime as the scan of `folder` would count them now (stat only: cheap,
 * and never opens a file), or null when it is gone. Compared with the listing to notice a model replaced
 * behind our back.
 */
export async function modelFileTotals(candidate: Pick<ModelCandidate, 'path' | 'format' | 'folder'>): Promise<{ sizeBytes: number; mtimeMs: number } | null> {
  try {
    if (candidate.format !== 'hf') {
      const s = await stat(candidate.path)
      return s.isFile() ? { sizeBytes: s.size, mtimeMs: s.mtimeMs } : null
    }
    const inside = insideOf(await realpath(candidate.folder))
    const realDir = await realpath(candidate.path)
    const files: FileInfo[] = []
    for (const name of await readdir(candidate.path)) {
      if (!isHfModelFile(name)) continue
      const p = join(candidate.path, name)
      const entry = await statEntry(p, join(realDir, name), inside)
      if (entry?.s.isFile() === true) files.push({ name, path: p, realPath: entry.real, sizeBytes: entry.s.size, mtimeMs: entry.s.mtimeMs, viaLink: entry.link })
    }
    return files.length === 0 ? null : totals(files)
  } catch {
    return null
  }
}

/**
 * A model file the user added by its path (stat only, never opened), or why it is not one: the file must be a
 * regular file named like a model the loaders read (.gguf, or a llama2.c .bin). A Hugging Face model is a
 * folder, added as a models folder.
 */
export async function modelFileCandidate(file: string): Promise<ModelCandidate | { readonly problem: string }> {
  const lower = file.toLowerCase()
  const format = lower.endsWith('.gguf') ? 'gguf' : lower.endsWith('.bin') && !isTokenizerFile(basename(file)) ? 'llama2c' : null
  let s: Stats
  let realPath: string
  try {
    s = await stat(file)
    realPath = await realpath(file)
  } catch (e) {
    return { problem: errorCode(e) === 'ENOENT' ? `File not found: ${file}.` : `The file cannot be read (${errorCode(e) ?? String(e)}).` }
  }
  if (s.isDirectory()) return { problem: `${file} is a folder: add it with "Add a folder" instead.` }
  if (!s.isFile()) return { problem: `${file} is not a regular file.` }
  if (format === null) return { problem: `${basename(file)} is not a model file: Tandem reads .gguf files and llama2.c .bin checkpoints (a Hugging Face model is a folder: add the folder).` }
  return { path: file, folder: dirname(file), format, sizeBytes: s.size, mtimeMs: s.mtimeMs, realPath }
}
