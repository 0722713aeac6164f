/**
 * HeaderReader: model headers read by a worker thread give the same facts as loadModel on this thread, for every
 * format; a broken file comes back as the loader's message and the worker goes on; and while a large header is
 * parsed, this thread's event loop keeps turning (counted, never timed).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { HeaderReader, HeaderReadError, HeaderWorkerError, loadModel } from '../../main/engine'
import { turnsWhile } from '../helpers/event-loop'
import { sharedModel, tempDir } from '../helpers/paths'

const reader = new HeaderReader()
const scratch = tempDir('tandem-headers-')
afterAll(async () => {
  await reader.dispose()
  scratch.dispose()
})

describe('HeaderReader', () => {
  it.each(['stories260K/stories260K.gguf', 'stories260K/stories260K.bin', 'stories260K/stories260K_q80.bin', 'tinystories-656K'])(
    'reads the same facts as loadModel: %s',
    async (relative) => {
      const path = sharedModel(relative)
      const here = await loadModel(path, { weights: false })
      expect(await reader.read(path)).toEqual({
        config: here.config,
        quantization: here.quantization,
        tensorTypes: [...here.tensorTypes],
        hasChatTemplate: here.chatTemplate !== null
      })
    }
  )

  it("answers a broken file with the loader's message, and reads the next one", async () => {
    const broken = join(scratch.dir, 'broken.gguf')
    writeFileSync(broken, Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(12, 0xff)]))
    const expected = await loadModel(broken, { weights: false }).then(
      () => null,
      (err: unknown) => (err instanceof Error ? err.message : String(err))
    )
    expect(expected).not.toBeNull()
    await expect(reader.read(broken)).rejects.toThrow(new HeaderReadError(expected ?? ''))
    expect((await reader.read(sharedModel('stories260K/stories260K.gguf'))).config.nLayers).toBeGreaterThan(0)
  })

  it('fails a read over its time limit as the reader\'s failure (HeaderWorkerError), not the file\'s', async () => {
    // a limit of 0 ms expires before a new worker thread can even start, let alone answer
    const impatient = new HeaderReader(0)
    try {
      const path = sharedModel('stories260K/stories260K.gguf')
      const late = impatient.read(path)
      await expect(late).rejects.toBeInstanceOf(HeaderWorkerError)
      await expect(late).rejects.toThrow(/took longer than 0 s/)
    } finally {
      await impatient.dispose()
    }
  })

  it('keeps this thread turning while it parses a large tokenizer', async () => {
    // tinystories-656K with ~40 MB of extra (ignored) data in its tokenizer.json: seconds of JSON parsing
    const folder = join(scratch.dir, 'big-tokenizer')
    cpSync(sharedModel('tinystories-656K'), folder, { recursive: true })
    const tokenizer: unknown = JSON.parse(readFileSync(join(folder, 'tokenizer.json'), 'utf8'))
    const padding = Array.from({ length: 400_000 }, (_, i) => ({ id: i, text: `padding token number ${i} ${'x'.repeat(60)}` }))
    writeFileSync(join(folder, 'tokenizer.json'), JSON.stringify({ ...Object(tokenizer), tandem_test_padding: padding }))
    const { turns, result } = await turnsWhile(() => reader.read(folder))
    expect(result.config.nLayers).toBeGreaterThan(0)
    // parsed on this thread (the old path), the read finishes before the loop turns once
    expect(turns).toBeGreaterThan(0)
  })
})
