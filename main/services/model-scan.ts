/**
 * @file Finding model files in a folder tree without opening them: GGUF files, llama2.c checkpoints (a
 * `.bin` with a `tok*.bin` tokenizer beside it; the tokenizer itself is not a model) and Hugging Face
 * folders (config.json + *.safetensors). Depth and entry count are bounded so a huge or looping tree
 * (symlinks) cannot stall the app; unreadable folders are skipped, never thrown.
 */
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'

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
  readonly sizeBytes: number
  readonly mtimeMs: number
}

/** Every model under `folder` (which may be a model folder itself), in path order. */
export async function scanModelFolder(folder: string): Promise<ModelCandidate[]> {
  const found: ModelCandidate[] = []
  let budget = MAX_SCAN_ENTRIES
  const visit = async (dir: string, depth: number): Promise<void> => {
    let names: string[]
    try {
      names = (await readdir(dir)).sort()
    } catch {
      return // unreadable (permissions) or gone: nothing to list
    }
    const files: FileInfo[] = []
    const subdirs: string[] = []
    for (const name of names) {
      if (budget-- <= 0) return
      const p = join(dir, name)
      try {
        // stat follows symlinks, so a linked model file or folder is found like a real one.
        const s = await stat(p)
        if (s.isFile()) files.push({ name, path: p, sizeBytes: s.size, mtimeMs: s.mtimeMs })
        else if (s.isDirectory() && !skipFolder(name)) subdirs.push(p)
      } catch {
        // broken symlink or raced deletion
      }
    }
    const lower = (f: FileInfo): string => f.name.toLowerCase()
    const safetensors = files.filter((f) => lower(f).endsWith('.safetensors'))
    if (safetensors.length > 0 && files.some((f) => f.name === 'config.json')) {
      // A Hugging Face model folder; its subfolders (onnx/, original/) are variants, not more models.
      const own = files.filter((f) => lower(f).endsWith('.safetensors') || lower(f).endsWith('.json') || lower(f) === 'tokenizer.model')
      found.push({
        path: dir,
        folder,
        format: 'hf',
        sizeBytes: own.reduce((sum, f) => sum + f.sizeBytes, 0),
        mtimeMs: Math.max(...own.map((f) => f.mtimeMs))
      })
      return
    }
    const hasTokenizer = files.some((f) => isTokenizerFile(f.name))
    for (const f of files) {
      const format = lower(f).endsWith('.gguf') ? 'gguf' : lower(f).endsWith('.bin') && hasTokenizer && !isTokenizerFile(f.name) ? 'llama2c' : null
      if (format !== null) found.push({ path: f.path, folder, format, sizeBytes: f.sizeBytes, mtimeMs: f.mtimeMs })
    }
    if (depth >= MAX_SCAN_DEPTH) return
    for (const sub of subdirs) await visit(sub, depth + 1)
  }
  await visit(folder, 0)
  return found
}
