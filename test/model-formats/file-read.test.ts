/**
 * Hostile files where a loader expects a model file, tokenizer or JSON: FIFOs (an ordinary open for reading
 * waits for a writer forever), a link to /dev/zero (reports 0 bytes, never ends), a /proc file (regular,
 * reports 0 bytes, has content) and files over their cap. Each must be refused at once with a message
 * naming the file and what it is, without reading (or allocating) more than the cap.
 */
import { mkdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readFileCapped } from '../../main/engine/model/file-read'
import { loadHfModel } from '../../main/engine/model/hf-model'
import { loadModel } from '../../main/engine/model/load'
import { readSafetensorsHeader } from '../../main/engine/model/safetensors'
import { loadHfTokenizer } from '../../main/engine/model/tokenizer/hf-tokenizer'
import { loadLlama2cTokenizer } from '../../main/engine/model/tokenizer/llama2c-tokenizer'
import { makeFifos } from '../helpers/fifo'
import { sharedModel, tempDir } from '../helpers/paths'

const tmp = tempDir('tandem-file-read-')
const fifos: { dispose(): void }[] = []
afterAll(() => {
  for (const f of fifos) f.dispose()
  tmp.dispose()
})

/** A copy of the shared TinyStories-656K folder (copied bytes, so the files are writable). */
function hfCopy(name: string): string {
  const dir = join(tmp.dir, name)
  mkdirSync(dir)
  const from = sharedModel('tinystories-656K')
  for (const f of ['config.json', 'generation_config.json', 'model.safetensors', 'special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']) {
    writeFileSync(join(dir, f), readFileSync(join(from, f)))
  }
  return dir
}

const MIB = 1 << 20

// FIFOs and /dev/zero are POSIX; Windows has neither at a path
describe.skipIf(process.platform === 'win32')('bounded model file reads', () => {
  it('refuses FIFOs at once wherever a loader opens a file', async () => {
    const hf = hfCopy('hf-fifo')
    const bin = join(tmp.dir, 'bin-fifo')
    mkdirSync(bin)
    writeFileSync(join(bin, 'model.bin'), readFileSync(sharedModel('stories260K/stories260K.bin')))
    const fifo = join(tmp.dir, 'plain.fifo')
    const gguf = join(tmp.dir, 'model.gguf')
    const shard = join(tmp.dir, 'weights.safetensors')
    rmSync(join(hf, 'tokenizer.json'))
    fifos.push(makeFifos([fifo, gguf, shard, join(hf, 'tokenizer.json'), join(bin, 'tok512.bin')]))

    expect(() => readFileCapped(fifo, MIB, 'tokenizer')).toThrow(/plain\.fifo: the tokenizer is not a regular file \(a FIFO\)/)
    expect(() => loadLlama2cTokenizer(fifo, 512)).toThrow(/not a regular file \(a FIFO\)/)
    expect(() => readSafetensorsHeader(shard)).toThrow(/weights\.safetensors: the safetensors file is not a regular file \(a FIFO\)/)
    expect(() => loadHfTokenizer(hf)).toThrow(/tokenizer\.json: the tokenizer is not a regular file \(a FIFO\)/)
    await expect(loadHfModel(hf, { weights: false })).rejects.toThrow(/tokenizer\.json: the tokenizer is not a regular file \(a FIFO\)/)
    await expect(loadModel(gguf, { weights: false })).rejects.toThrow(/model\.gguf: the model file is not a regular file \(a FIFO\)/)
    // the only tok*.bin beside a llama2.c checkpoint is a FIFO: no tokenizer, and the reason says why
    await expect(loadModel(join(bin, 'model.bin'), { weights: false })).rejects.toThrow(/tok512\.bin: the tokenizer is not a regular file \(a FIFO\)/)
  })

  it('refuses a link to /dev/zero without reading it', async () => {
    const hf = hfCopy('hf-zero')
    rmSync(join(hf, 'tokenizer.json'))
    symlinkSync('/dev/zero', join(hf, 'tokenizer.json'))
    const before = process.memoryUsage()
    await expect(loadHfModel(hf, { weights: false })).rejects.toThrow(/tokenizer\.json: the tokenizer is not a regular file \(a character device\)/)
    expect(() => readFileCapped(join(hf, 'tokenizer.json'), 16 * MIB, 'tokenizer')).toThrow(/a character device/)
    const after = process.memoryUsage()
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(100 * MIB)
    expect(after.rss - before.rss).toBeLessThan(100 * MIB)
  })

  // /proc files are regular files that report 0 bytes and have content
  it.skipIf(process.platform !== 'linux')('caps what is actually read, not what stat reports', () => {
    const proc = '/proc/self/status'
    expect(readFileCapped(proc, MIB, 'status').toString('utf8')).toMatch(/^Name:/)
    expect(() => readFileCapped(proc, 16, 'status')).toThrow(/status: the status is larger than 16 bytes/)
    const exact = join(tmp.dir, 'exact.bin')
    writeFileSync(exact, Buffer.alloc(32, 7))
    const bytes = readFileCapped(exact, 32, 'file')
    expect(bytes.byteLength).toBe(32)
    expect(bytes.byteOffset).toBe(0)
    expect(() => readFileCapped(exact, 31, 'file')).toThrow(/larger than 31 bytes/)
  })

  it('refuses a config file over its limit, naming the limit', async () => {
    const hf = hfCopy('hf-big-config')
    // sparse: 2 MiB that take no disk space; the config limit is 1 MiB
    truncateSync(join(hf, 'config.json'), 2 * MIB)
    await expect(loadHfModel(hf, { weights: false })).rejects.toThrow(/config\.json: the model config is larger than 1 MiB/)
  })
})
