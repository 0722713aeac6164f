/**
 * @file The one entry point for opening a model: a folder is a Hugging Face model, a file starting with
 * "GGUF" is GGUF, anything else is tried as a llama2.c checkpoint.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs'
import { ModelFormatError } from './errors'
import { loadGgufModel } from './gguf-model'
import { loadHfModel } from './hf-model'
import { loadLlama2cModel } from './llama2c'
import type { LoadOptions, LoadedModel } from './types'

const GGUF_MAGIC = 'GGUF'

function startsWithGguf(path: string): boolean {
  const fd = openSync(path, 'r')
  try {
    const head = new Uint8Array(GGUF_MAGIC.length)
    const got = readSync(fd, head, 0, head.length, 0)
    return got === head.length && new TextDecoder().decode(head) === GGUF_MAGIC
  } finally {
    closeSync(fd)
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
