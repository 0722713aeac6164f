/**
 * @file `tandem summarize` in a child process on files the test writes: a multi-page PDF longer than stories260K's
 * context (cut into parts, mapped and reduced), a text file, and a binary file renamed .txt; --json prints one object
 * per file that worked, the bad one is reported on stderr and makes the exit code 1, progress goes to stderr. Without
 * --json the summary streams to stdout under a header per file. Bad flags are usage errors.
 */
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { writePdf } from '../fixtures/pdf-writer'
import { sharedModel, tempDir } from '../helpers/paths'
import { runCli } from './run-cli'

const scratch = tempDir('tandem-cli-summarize-')
afterAll(() => scratch.dispose())

/** the llama2.c checkpoint: its 512-token context makes the PDF several parts */
const MODEL = sharedModel('stories260K/stories260K.bin')
const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends.'

describe('tandem summarize', () => {
  it('summarizes a long PDF and a text file, reports a bad file, prints one JSON object per summary', async () => {
    const pdf = writePdf(Array.from({ length: 12 }, (_, i) => ['Lily Stories', `Story ${i + 1}`, STORY, `She found a ${['red', 'blue', 'green'][i % 3]} ball on day ${i + 1}.`, STORY, `- ${i + 1} -`]))
    const pdfPath = join(scratch.dir, 'stories.pdf')
    writeFileSync(pdfPath, pdf)
    const txtPath = join(scratch.dir, 'note.txt')
    writeFileSync(txtPath, `${STORY}\n`)
    const badPath = join(scratch.dir, 'image.txt')
    writeFileSync(badPath, new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13]))

    const r = await runCli(['summarize', pdfPath, badPath, txtPath, '--model', MODEL, '--max-tokens', '32', '--json'], join(scratch.dir, 'cache'), 120_000)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/image\.txt is not a text file/)
    expect(r.stderr).toMatch(/stories\.pdf: step 1 of \d+/)
    const lines = r.stdout.trim().split('\n').map((l): unknown => JSON.parse(l))
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatchObject({ summary: expect.stringMatching(/\S/), file: { name: 'stories.pdf', type: 'pdf', bytes: pdf.byteLength, sha256: createHash('sha256').update(pdf).digest('hex') } })
    expect(lines[0]).toMatchObject({ parts: expect.any(Number), stats: { steps: expect.any(Number), levels: expect.any(Number) } })
    const [first, second] = lines as { parts: number; stats: { steps: number; levels: number } }[]
    expect(first.parts).toBeGreaterThan(1)
    expect(first.stats.steps).toBeGreaterThan(first.parts)
    expect(first.stats.levels).toBeGreaterThanOrEqual(1)
    expect(second).toMatchObject({ parts: 1, stats: { steps: 1, levels: 0 }, file: { name: 'note.txt', type: 'text' } })

    // plain output: the summary on stdout, exit 0
    const plain = await runCli(['summarize', txtPath, '--model', MODEL, '--max-tokens', '24'], join(scratch.dir, 'cache'), 60_000)
    expect(plain.code).toBe(0)
    expect(plain.stdout.trim()).not.toBe('')
  }, 180_000)

  it('refuses bad flags and missing files', async () => {
    const cache = join(scratch.dir, 'cache')
    const none = await runCli(['summarize', '--model', MODEL], cache, 30_000)
    expect(none.code).toBe(2)
    expect(none.stderr).toMatch(/at least one FILE/)
    const tooLong = await runCli(['summarize', 'x.txt', '--max-tokens', '99999'], cache, 30_000)
    expect(tooLong.code).toBe(2)
    const missing = await runCli(['summarize', join(scratch.dir, 'gone.md'), '--model', MODEL], cache, 60_000)
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/gone\.md was not found/)
  }, 120_000)
})
