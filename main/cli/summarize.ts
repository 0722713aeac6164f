/**
 * @file `tandem summarize FILE...`: each file read (type and size checked first), its text extracted, and summarized
 * map-reduce (main/services/documents) with the model; progress on stderr, the summary on stdout — streamed as the
 * last step writes it, or with --json one object per file. A file that cannot be read or summarized is reported and
 * the others still run (exit code 1 when any failed). Ctrl+C stops at the next step.
 */
import { createHash } from 'node:crypto'
import { homedir } from 'node:os'
import { TextModel } from '../engine'
import { defaultModelsDir, extractDocument, readDocumentFile, scanModelFolder, summarize, textSummaryModel, type SummaryProgress } from '../services'
import type { SummarizeArgs } from './args'
import { firstOpenReporter } from './open-progress'

/** The first model in the app's models folder, or an error saying how to choose one. */
async function defaultModel(): Promise<string> {
  const dir = defaultModelsDir(process.env, homedir())
  const scan = await scanModelFolder(dir)
  const first = scan.candidates[0]
  if (first === undefined) throw new Error(`no model given and none found in ${dir}: pass --model PATH`)
  return first.path
}

function formatEta(p: SummaryProgress): string {
  if (p.etaMs === null) return ''
  const s = Math.round(p.etaMs / 1000)
  return s < 60 ? `, about ${s} s left` : `, about ${Math.round(s / 60)} min left`
}

/** Runs `tandem summarize`; returns the exit code. */
export async function summarizeCommand(args: SummarizeArgs): Promise<number> {
  const log = (line: string): void => void process.stderr.write(`tandem: ${line}\n`)
  const path = args.model ?? (await defaultModel())
  const model = await TextModel.open(path, { cacheDir: args.cacheDir, threads: args.threads, onProgress: firstOpenReporter(log) })
  const controller = new AbortController()
  const onSigint = (): void => controller.abort(new Error('stopped (Ctrl+C)'))
  process.once('SIGINT', onSigint)
  let failed = 0
  try {
    const adapter = textSummaryModel(model)
    for (const [i, file] of args.files.entries()) {
      try {
        const { name, bytes } = await readDocumentFile(file)
        const sha256 = createHash('sha256').update(bytes).digest('hex')
        const doc = await extractDocument(name, bytes)
        const t0 = performance.now()
        if (!args.json && args.files.length > 1) process.stdout.write(`${i > 0 ? '\n' : ''}== ${name} ==\n`)
        const result = await summarize(doc.text, adapter, {
          maxSummaryTokens: args.maxTokens,
          signal: controller.signal,
          onProgress: (p) => log(`${name}: step ${p.done} of ${p.total}${formatEta(p)}`),
          ...(!args.json && { onText: (t: string) => void process.stdout.write(t) })
        })
        const stats = { steps: result.steps, levels: result.levels, seconds: (performance.now() - t0) / 1000, textChars: doc.text.length }
        if (args.json) process.stdout.write(`${JSON.stringify({ summary: result.summary, parts: result.parts, file: { name, type: doc.type, bytes: bytes.byteLength, sha256 }, stats })}\n`)
        else process.stdout.write('\n')
      } catch (err) {
        if (controller.signal.aborted) throw err
        failed++
        log(err instanceof Error ? err.message : String(err))
      }
    }
  } finally {
    process.off('SIGINT', onSigint)
    await model.dispose()
  }
  return failed === 0 ? 0 : 1
}
