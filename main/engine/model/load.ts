/**
 * @file The one entry point for opening a model: a folder is a Hugging Face model, a file starting with
 * "GGUF" is GGUF, anything else is tried as a llama2.c checkpoint.
 */
import { closeSync, statSync } from 'node:fs'
import { ModelFormatError } from './errors'
import { openRegularFile, readPrefix } from './file-read'
import { loadGgufModel } from './gguf-model'
import { loadHfModel } from './hf-model'
import { loadLlama2cModel } from './llama2c'
import type { LoadOptions, LoadedModel } from './types'

const GGUF_MAGIC = 'GGUF'

/** Whether the file starts with the GGUF magic; a FIFO or device is refused here, before any loader opens it. */
function startsWithGguf(path: string): boolean {
  const file = openRegularFile(path, 'model file')
  try {
    return new TextDecoder().decode(readPrefix(file, GGUF_MAGIC.length)) === GGUF_MAGIC
  } finally {
    closeSync(file.fd)
  }
}

/** Opens a model file or folder in whichever supported format it is. */
export async function loadModel(path: string, options: LoadOptions = {}): Promise<LoadedModel> {
  let isDirectory: boolean
  try {
    isDirectory = statSync(path).isDirectory()
  } catch {
    throw new ModelFormatError(path, 'no such file or folder')
  }
  if (isDirectory) return loadHfModel(path, options)
  if (startsWithGguf(path)) return loadGgufModel(path, options)
  return loadLlama2cModel(path, options)
}
