/**
 * @file Time to first token when a conversation continues (issue #14): a history of 256 … ~4k tokens on the 110M
 * shape with a 4k context, then a new message of NEW_TOKENS tokens, answered (a) by a model that computes the whole
 * prompt and (b) by a fresh model that restores the history from its KV snapshot in SQLite and computes only the new
 * tokens. Also the snapshot's bytes per token and the save and restore times. Each measurement opens fresh model
 * workers (the graph is cached), so neither side profits from a live cache.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { KV_FORMATS, TextModel, type GenerateRequest, type GenerationResult, type KvFormat } from '../main/engine'
import { KvSnapshots, KV_SNAPSHOT_FORMAT } from '../main/services/kv-snapshots'
import { openStore } from '../main/store'
import { writeRandomGgufModel } from '../test/fixtures/random-gguf'
import { sharedModel } from '../test/helpers/paths'
import { ensureBenchModel, MODEL_LABELS, type BenchModelId } from './models'
import { median } from './stats'

const MODEL: BenchModelId = '110m-4k'
/** History lengths; the last is the 4k context less room for the new message and a reply token. */
const HISTORIES = [256, 1024, 2048, 4064] as const
const NEW_TOKENS = 16
/** Greedy tokens compared after the first: a restore must continue as the recompute does. */
const CONTINUATION = 16

/** One format's measurements at one history length (ms lists: one entry per rep). */
export interface KvFormatRow {
  readonly format: KvFormat
  readonly restoreTtftMs: readonly number[]
  /** matching, reading and loading the snapshot into the fresh worker, inside restoreTtftMs */
  readonly restoreMs: readonly number[]
  readonly saveMs: number
  readonly snapshotBytes: number
  /** greedy continuation (CONTINUATION tokens) after restore equals the recompute's */
  readonly sameContinuation: boolean
}

/** One history length: the recompute, and each format's restore. */
export interface KvSnapshotRow {
  readonly historyTokens: number
  readonly recomputeTtftMs: readonly number[]
  readonly formats: readonly KvFormatRow[]
}

/** How often a format's restored greedy continuation equals the recompute's, on one model. */
export interface KvAgreementRow {
  readonly model: string
  readonly format: KvFormat
  readonly prompts: number
  readonly identical: number
  /** for each prompt that differed, the first differing token's index */
  readonly firstDifference: readonly number[]
}

export interface KvSnapshotRecord {
  readonly model: string
  readonly defaultFormat: KvFormat
  readonly newTokens: number
  readonly continuationTokens: number
  readonly reps: number
  /** bytes the worker's float32 KV cache holds per position */
  readonly cacheBytesPerToken: number
  /** this machine's rate of touching freshly allocated memory for the first time (page faults), GB/s */
  readonly firstTouchGBps: number
  readonly rows: readonly KvSnapshotRow[]
  readonly agreementTokens: number
  readonly agreement: readonly KvAgreementRow[]
}

/** Greedy tokens compared per prompt in the agreement rows. */
const AGREEMENT_TOKENS = 48
const AGREEMENT_PROMPTS = 4
const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends. One day, she found a shiny red ball under a big tree. '

/**
 * Whether each format's restore continues as a recompute does, token for token: the shared trained models and a
 * seeded random model (whose near-tied logits make small differences visible), AGREEMENT_PROMPTS prompts each.
 */
async function formatAgreement(dir: string, log: (line: string) => void): Promise<KvAgreementRow[]> {
  const random = join(dir, 'agreement-random.gguf')
  await writeRandomGgufModel(random, { architecture: 'llama', dim: 256, hiddenDim: 512, nLayers: 4, nHeads: 8, nKvHeads: 4, vocabSize: 512, contextLength: 1024, tensorType: 'f32', seed: 7 })
  const models: readonly [string, string][] = [
    ['stories260K', sharedModel('stories260K/stories260K.gguf')],
    ['TinyStories-656K', sharedModel('tinystories-656K')],
    ['random 4×256 (seed 7)', random]
  ]
  const open = (path: string): Promise<TextModel> => TextModel.open(path, { cacheDir: join(dir, 'graphs'), threads: 1, maxContext: 1024 })
  const rows: KvAgreementRow[] = []
  for (const [name, path] of models) {
    log(`kv: format agreement on ${name}`)
    for (const format of KV_FORMATS) {
      const firstDifference: number[] = []
      for (let p = 1; p <= AGREEMENT_PROMPTS; p++) {
        const store = openStore(join(dir, `agreement-${rows.length}-${p}.db`))
        try {
          const snapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => 1 << 30, log, format })
          let model = await open(path)
          const ids = path === random ? [1, ...Array.from({ length: 300 + p * 50 }, (_, i) => 3 + ((i * 37 + p * 11) % 500))] : model.encodePrompt(STORY.repeat(2 + p))
          const reply = await greedy(model, ids, 8)
          await snapshots.save(model)
          await model.dispose()
          const next = [...ids, ...reply.tokens, ...ids.slice(5, 12)]
          model = await open(path)
          const restored = await greedy(model, next, AGREEMENT_TOKENS, snapshots.restorer(model))
          await model.dispose()
          if (restored.stats.restoredTokens === 0) throw new Error(`${name} ${format}: nothing restored`)
          model = await open(path)
          const recomputed = await greedy(model, next, AGREEMENT_TOKENS)
          await model.dispose()
          const at = restored.tokens.findIndex((t, i) => t !== recomputed.tokens[i])
          if (at >= 0 || restored.tokens.length !== recomputed.tokens.length) firstDifference.push(at >= 0 ? at : Math.min(restored.tokens.length, recomputed.tokens.length))
        } finally {
          store.close()
        }
      }
      rows.push({ model: name, format, prompts: AGREEMENT_PROMPTS, identical: AGREEMENT_PROMPTS - firstDifference.length, firstDifference })
    }
  }
  return rows
}

function historyOf(n: number, vocab: number): number[] {
  return [1, ...Array.from({ length: n - 1 }, (_, i) => 100 + ((i * 7919) % (vocab - 200)))]
}

/**
 * The first-touch rate: a fresh buffer's pages are faulted in as they are first written. Every restore and every
 * recompute pays it for the KV cache it fills; on a virtual machine it can be far below memory bandwidth.
 */
function firstTouchGBps(): number {
  const bytes = 256 * 1024 * 1024
  const t = performance.now()
  new Uint8Array(bytes).fill(1)
  return bytes / 1e9 / ((performance.now() - t) / 1000)
}

async function greedy(model: TextModel, promptIds: readonly number[], maxTokens: number, restore?: GenerateRequest['restore']): Promise<GenerationResult> {
  const g = model.generate({ promptIds, maxTokens, sampling: { temperature: 0 }, ...(restore !== undefined && { restore }) })
  for await (const _ of g) void _
  return g.result
}

/** Runs the rows. */
export async function benchmarkKvSnapshots(options: { readonly modelsDir: string; readonly reps: number; readonly log: (line: string) => void }): Promise<KvSnapshotRecord> {
  const file = await ensureBenchModel(MODEL, options.modelsDir, options.log)
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-kv-'))
  const reps = Math.max(1, options.reps)
  const open = (): Promise<TextModel> => TextModel.open(file.path, { cacheDir: join(dir, 'graphs'), maxContext: 4096 })
  const rows: KvSnapshotRow[] = []
  const touch = median([firstTouchGBps(), firstTouchGBps(), firstTouchGBps()])
  let cacheBytesPerToken = 0
  try {
    for (const n of HISTORIES) {
      options.log(`kv: history ${n} tokens (${reps} reps)`)
      const writer = await open()
      const { vocabSize: vocab, nLayers, nKvHeads, headDim } = writer.info.config
      cacheBytesPerToken = 2 * nLayers * nKvHeads * headDim * 4
      const history = historyOf(n, vocab)
      await greedy(writer, history, 1)
      const formats = []
      for (const format of KV_FORMATS) {
        const store = openStore(join(dir, `kv-${n}-${format}.db`))
        const snapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => 8 * 1024 ** 3, log: options.log, format })
        const t0 = performance.now()
        await snapshots.save(writer)
        formats.push({ format, store, snapshots, saveMs: performance.now() - t0, snapshotBytes: store.kvBlocks.usage().bytes })
      }
      await writer.dispose()
      const prompt = [...history, ...historyOf(NEW_TOKENS + 1, vocab).slice(1).map((t) => t + 1)]
      const recomputeTtftMs: number[] = []
      const restores = formats.map(() => ({ ttft: [] as number[], restore: [] as number[], same: true }))
      try {
        for (let rep = 0; rep < reps; rep++) {
          const recompute = await open()
          const want = await greedy(recompute, prompt, CONTINUATION)
          recomputeTtftMs.push(want.stats.ttftMs)
          await recompute.dispose()
          for (const [i, f] of formats.entries()) {
            const model = await open()
            const inner = f.snapshots.restorer(model)
            let restoreMs = 0
            const got = await greedy(model, prompt, CONTINUATION, async (p, live) => {
              const t = performance.now()
              const restored = await inner(p, live)
              restoreMs += performance.now() - t
              return restored
            })
            await model.dispose()
            if (got.stats.restoredTokens !== n) throw new Error(`${f.format}: restored ${got.stats.restoredTokens} of ${n} history tokens`)
            restores[i].ttft.push(got.stats.ttftMs)
            restores[i].restore.push(restoreMs)
            if (got.tokens.join() !== want.tokens.join()) restores[i].same = false
          }
        }
      } finally {
        for (const f of formats) f.store.close()
      }
      rows.push({
        historyTokens: n,
        recomputeTtftMs,
        formats: formats.map((f, i) => ({ format: f.format, restoreTtftMs: restores[i].ttft, restoreMs: restores[i].restore, saveMs: f.saveMs, snapshotBytes: f.snapshotBytes, sameContinuation: restores[i].same }))
      })
    }
    const agreement = await formatAgreement(dir, options.log)
    return { model: MODEL_LABELS[MODEL], defaultFormat: KV_SNAPSHOT_FORMAT, newTokens: NEW_TOKENS, continuationTokens: CONTINUATION, reps, cacheBytesPerToken, firstTouchGBps: touch, rows, agreementTokens: AGREEMENT_TOKENS, agreement }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The rows as markdown. */
export function renderKvSnapshots(r: KvSnapshotRecord): string {
  const ms = (v: readonly number[]): string => median(v).toFixed(0)
  return [
    `## Continuing a conversation: KV snapshot restore vs recompute (${r.model}; a new message of ${r.newTokens} tokens; median of ${r.reps}; default format ${r.defaultFormat})`,
    '',
    '| history tokens | format | TTFT recompute ms | TTFT restore ms | speedup | restore ms (read + load) | save ms | snapshot bytes/token | same ' + r.continuationTokens + ' tokens |',
    '|---:|:---|---:|---:|---:|---:|---:|---:|:---:|',
    ...r.rows.flatMap((row) =>
      row.formats.map(
        (f) =>
          `| ${row.historyTokens} | ${f.format} | ${ms(row.recomputeTtftMs)} | ${ms(f.restoreTtftMs)} | ${(median(row.recomputeTtftMs) / median(f.restoreTtftMs)).toFixed(1)}× | ${ms(f.restoreMs)} | ${f.saveMs.toFixed(0)} | ${(f.snapshotBytes / row.historyTokens).toFixed(0)} | ${f.sameContinuation ? 'yes' : 'NO'} |`
      )
    ),
    '',
    `Both sides open a fresh model worker (graph cached), so neither has a live cache; TTFT is the generation loop's (prompt in, first token out). The recompute prefills history + new message; the restore reads the history's blocks from SQLite, loads them into the worker and prefills only the new message; both then continue greedily for ${r.continuationTokens} tokens, compared token for token. The largest history is 4,064 tokens: the 4k context less room for the new message.`,
    '',
    `### Does a restore continue exactly as a recompute? (greedy, ${r.agreementTokens} tokens, per format)`,
    '',
    '| model | format | identical continuations | first differing token |',
    '|:---|:---|---:|:---|',
    ...r.agreement.map((a) => `| ${a.model} | ${a.format} | ${a.identical} of ${a.prompts} | ${a.firstDifference.length === 0 ? '–' : a.firstDifference.join(', ')} |`),
    '',
    `This machine faults freshly allocated memory in at ${r.firstTouchGBps.toFixed(2)} GB/s (first touch of a 256 MiB buffer). Both sides pay it for the KV cache they fill (float32 in the worker: ${(r.cacheBytesPerToken / 1000).toFixed(1)} KB per position, ${((r.cacheBytesPerToken * 2048) / 1e6).toFixed(0)} MB at 2,048), and the restore also for the blocks it reads — so on this machine bytes cost more than their read.`
  ].join('\n')
}
