/**
 * @file The map-reduce summary on a real model (stories260K, 512-token context): a text of one prompt is summarized
 * in one step; a long text is cut into parts (each within the budget), mapped, and reduced over as many levels as it
 * takes, with progress that counts every step and ends at total; a cancel stops it at the next step. The tiny model
 * writes poor summaries: the checks are about the pipeline, not the prose.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TextModel } from '../../main/engine'
import { splitByTokens } from '../../main/services/documents/split'
import { summarize, summaryBudget, textSummaryModel, type SummaryModel, type SummaryProgress } from '../../main/services/documents/summarize'
import { sharedModel, tempDir } from '../helpers/paths'

const scratch = tempDir('tandem-summarize-')
let model: TextModel
let adapter: SummaryModel

beforeAll(async () => {
  model = await TextModel.open(sharedModel('stories260K/stories260K.gguf'), { cacheDir: join(scratch.dir, 'graphs'), threads: 1, maxContext: 512 })
  adapter = textSummaryModel(model)
}, 60_000)

afterAll(async () => {
  await model.dispose()
  scratch.dispose()
})

const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends. One day, she found a shiny red ball under a big tree.'

/** Calls and prompt sizes of a model, with the real one underneath. */
function recorded(inner: SummaryModel): { model: SummaryModel; promptTokens: number[] } {
  const promptTokens: number[] = []
  return {
    promptTokens,
    model: { ...inner, generate: (ids, max, signal, onText) => (promptTokens.push(ids.length), inner.generate(ids, max, signal, onText)) }
  }
}

describe('summarizing with map-reduce', () => {
  it('a short text is one step, streamed', async () => {
    const streamed: string[] = []
    const r = await summarize(STORY, adapter, { maxSummaryTokens: 24, signal: new AbortController().signal, onText: (t) => streamed.push(t) })
    expect(r).toMatchObject({ parts: 1, steps: 1, levels: 0 })
    expect(r.summary).not.toBe('')
    expect(streamed.join('').trim()).toBe(r.summary)
  })

  it('a long text is cut into parts within the context, mapped and reduced over levels until one prompt holds it', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `Chapter ${i + 1}. ${STORY} ${STORY}`).join('\n\n')
    const { model: m, promptTokens } = recorded(adapter)
    const progress: SummaryProgress[] = []
    const r = await summarize(text, m, { maxSummaryTokens: 48, signal: new AbortController().signal, onProgress: (p) => progress.push(p) })
    expect(r.summary).not.toBe('')
    // every prompt fits the context with room for its summary
    for (const n of promptTokens) expect(n + 48).toBeLessThanOrEqual(model.contextLength)
    expect(r.parts).toBeGreaterThan(10)
    expect(r.levels).toBeGreaterThanOrEqual(1)
    expect(r.steps).toBe(promptTokens.length)
    expect(r.steps).toBeGreaterThan(r.parts)
    // progress: one report at the start and after every step; done never goes back; it ends at total
    const last = progress.at(-1)
    expect(last?.done).toBe(r.steps)
    expect(last?.total).toBe(r.steps)
    for (let i = 1; i < progress.length; i++) expect(progress[i].done).toBeGreaterThanOrEqual(progress[i - 1].done)
    expect(progress.filter((p) => p.etaMs !== null).length).toBeGreaterThan(0)
    // the map saw exactly the parts the splitter makes for the budget
    expect(r.parts).toBe(splitByTokens(text, adapter.countTokens, summaryBudget(adapter, 48).partTokens).length)
  }, 120_000)

  it('stops at the next step when cancelled, rejecting with the abort', async () => {
    const text = Array.from({ length: 20 }, () => `${STORY} ${STORY}`).join('\n\n')
    const controller = new AbortController()
    const { model: m, promptTokens } = recorded(adapter)
    const run = summarize(text, m, { maxSummaryTokens: 32, signal: controller.signal, onProgress: (p) => p.done >= 2 && controller.abort(new Error('cancelled by the user')) })
    await expect(run).rejects.toThrow(/cancelled by the user/)
    expect(promptTokens.length).toBe(2)
  }, 60_000)

  it('refuses a context too small for the instructions and the summary', async () => {
    await expect(summarize(STORY, { ...adapter, contextLength: 100 }, { maxSummaryTokens: 64, signal: new AbortController().signal })).rejects.toThrow(/leaves \d+ for the text/)
  })
})
