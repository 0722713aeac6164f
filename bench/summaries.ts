/**
 * @file Summarizing a long document (issue #15): a generated 50-page PDF summarized map-reduce by the 110M shape
 * with a 4k context (random weights: its summaries are noise of the full length, so every step decodes its whole
 * budget — the slow case). Reports extraction time, parts and steps, the total and per-page time, and how the model's
 * time splits between prefill (reading the parts) and decode (writing the summaries): the share an NPU prefill
 * would take over.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TextModel } from '../main/engine'
import { extractDocument, summarize, textSummaryModel, type SummaryModel } from '../main/services/documents'
import { writePdf } from '../test/fixtures/pdf-writer'
import { Rng } from '../test/fixtures/rng'
import { ensureBenchModel, MODEL_LABELS, type BenchModelId } from './models'

const MODEL: BenchModelId = '110m-4k'
const PAGES = 50
const LINES_PER_PAGE = 40
const SUMMARY_TOKENS = 256

export interface SummaryBenchRecord {
  readonly model: string
  readonly pages: number
  readonly pdfBytes: number
  readonly textChars: number
  readonly extractMs: number
  readonly parts: number
  readonly steps: number
  readonly levels: number
  readonly totalMs: number
  readonly prefillTokens: number
  readonly prefillMs: number
  readonly decodeTokens: number
  readonly decodeMs: number
}

/** Page lines of plausible prose (seeded), each page with a running header and a page number. */
function pages(rng: Rng): string[][] {
  const words = ['market', 'growth', 'team', 'customers', 'quarter', 'product', 'energy', 'costs', 'plan', 'region', 'sales', 'research', 'the', 'a', 'and', 'of', 'in', 'to', 'for', 'with', 'our', 'new', 'strong', 'lower', 'higher']
  const line = (): string => Array.from({ length: 9 + Math.floor(rng.uniform() * 5) }, () => words[Math.floor(rng.uniform() * words.length)]).join(' ')
  return Array.from({ length: PAGES }, (_, p) => ['Annual Review 2026', ...Array.from({ length: LINES_PER_PAGE }, () => `${line()}.`), `Page ${p + 1} of ${PAGES}`])
}

/** Runs the summary once and measures it. */
export async function benchmarkSummaries(options: { readonly modelsDir: string; readonly log: (line: string) => void }): Promise<SummaryBenchRecord> {
  const file = await ensureBenchModel(MODEL, options.modelsDir, options.log)
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-summary-'))
  const model = await TextModel.open(file.path, { cacheDir: join(dir, 'graphs'), maxContext: 4096 })
  try {
    const pdf = writePdf(pages(new Rng(15)))
    const t0 = performance.now()
    const doc = await extractDocument('review.pdf', pdf)
    const extractMs = performance.now() - t0
    const inner = textSummaryModel(model)
    let prefillTokens = 0
    let prefillMs = 0
    let decodeTokens = 0
    let decodeMs = 0
    // the generation's own stats split each step into prefill and decode
    const measured: SummaryModel = {
      ...inner,
      async generate(promptIds, maxTokens, signal, onText) {
        const g = model.generate({ promptIds, maxTokens, signal, sampling: { temperature: 0 } })
        for await (const e of g) if (e.text !== '') onText?.(e.text)
        const r = await g.result
        prefillTokens += r.stats.prefillTokens
        prefillMs += r.stats.ttftMs
        decodeTokens += Math.max(0, r.stats.generatedTokens - 1)
        decodeMs += r.stats.decodeTokensPerSec > 0 ? (Math.max(0, r.stats.generatedTokens - 1) / r.stats.decodeTokensPerSec) * 1000 : 0
        return r.text
      }
    }
    options.log(`summary: ${PAGES}-page PDF, ${doc.text.length} characters`)
    const t1 = performance.now()
    const result = await summarize(doc.text, measured, { maxSummaryTokens: SUMMARY_TOKENS, signal: new AbortController().signal, onProgress: (p) => options.log(`summary: step ${p.done} of ${p.total}`) })
    const totalMs = performance.now() - t1
    return { model: MODEL_LABELS[MODEL], pages: PAGES, pdfBytes: pdf.byteLength, textChars: doc.text.length, extractMs, parts: result.parts, steps: result.steps, levels: result.levels, totalMs, prefillTokens, prefillMs, decodeTokens, decodeMs }
  } finally {
    await model.dispose()
    await rm(dir, { recursive: true, force: true })
  }
}

/** The record as markdown. */
export function renderSummaries(r: SummaryBenchRecord): string {
  const s = (ms: number): string => (ms / 1000).toFixed(1)
  return [
    `## Summarizing a ${r.pages}-page PDF (${r.model}; summaries of up to ${SUMMARY_TOKENS} tokens)`,
    '',
    '| pages | text chars | extract ms | parts (map) | steps | reduce levels | total s | s per page | prefill tokens / s | decode tokens / s | prefill share |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${r.pages} | ${r.textChars} | ${r.extractMs.toFixed(0)} | ${r.parts} | ${r.steps} | ${r.levels} | ${s(r.totalMs)} | ${(r.totalMs / 1000 / r.pages).toFixed(2)} | ${r.prefillTokens} / ${s(r.prefillMs)} | ${r.decodeTokens} / ${s(r.decodeMs)} | ${((100 * r.prefillMs) / Math.max(1, r.prefillMs + r.decodeMs)).toFixed(0)}% |`,
    '',
    'Random weights write noise to the full summary length at every step, so decode time is the most a summary of this shape can take; a trained model stops earlier. Prefill is the time to first token of each step, decode the rest.'
  ].join('\n')
}
