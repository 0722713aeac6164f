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
import { TextModel } from '../main/engine'
import { KvSnapshots, KV_SNAPSHOT_FORMAT } from '../main/services/kv-snapshots'
import { openStore } from '../main/store'
import { ensureBenchModel, MODEL_LABELS, type BenchModelId } from './models'
import { median } from './stats'

const MODEL: BenchModelId = '110m-4k'
/** History lengths; the last is the 4k context less room for the new message and a reply token. */
const HISTORIES = [256, 1024, 2048, 4064] as const
const NEW_TOKENS = 16

/** One history length's measurements (ms lists: one entry per rep). */
export interface KvSnapshotRow {
  readonly historyTokens: number
  readonly recomputeTtftMs: readonly number[]
  readonly restoreTtftMs: readonly number[]
  /** matching and writing the snapshot into the fresh worker, inside restoreTtftMs */
  readonly restoreMs: readonly number[]
  readonly saveMs: readonly number[]
  readonly snapshotBytes: number
  /** greedy first token after restore equals the recompute's */
  readonly sameFirstToken: boolean
}

export interface KvSnapshotRecord {
  readonly model: string
  readonly format: string
  readonly newTokens: number
  readonly reps: number
  readonly rows: readonly KvSnapshotRow[]
}

function historyOf(n: number, vocab: number): number[] {
  return [1, ...Array.from({ length: n - 1 }, (_, i) => 100 + ((i * 7919) % (vocab - 200)))]
}

/** Runs the rows. */
export async function benchmarkKvSnapshots(options: { readonly modelsDir: string; readonly reps: number; readonly log: (line: string) => void }): Promise<KvSnapshotRecord> {
  const file = await ensureBenchModel(MODEL, options.modelsDir, options.log)
  const dir = await mkdtemp(join(tmpdir(), 'tandem-bench-kv-'))
  const reps = Math.max(1, options.reps)
  const open = (): Promise<TextModel> => TextModel.open(file.path, { cacheDir: join(dir, 'graphs'), maxContext: 4096 })
  const rows: KvSnapshotRow[] = []
  try {
    for (const n of HISTORIES) {
      options.log(`kv: history ${n} tokens (${reps} reps)`)
      const row = { historyTokens: n, recomputeTtftMs: [] as number[], restoreTtftMs: [] as number[], restoreMs: [] as number[], saveMs: [] as number[], snapshotBytes: 0, sameFirstToken: true }
      for (let rep = 0; rep < reps; rep++) {
        const store = openStore(join(dir, `kv-${n}-${rep}.db`))
        const snapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => 8 * 1024 ** 3, log: options.log })
        try {
          const writer = await open()
          const vocab = writer.info.config.vocabSize
          const history = historyOf(n, vocab)
          const first = writer.generate({ promptIds: history, maxTokens: 1, sampling: { temperature: 0 } })
          for await (const _ of first) void _
          await first.result
          const t0 = performance.now()
          await snapshots.save(writer)
          row.saveMs.push(performance.now() - t0)
          row.snapshotBytes = store.kvBlocks.usage().bytes
          await writer.dispose()
          const prompt = [...history, ...historyOf(NEW_TOKENS + 1, vocab).slice(1).map((t) => t + 1)]

          const recompute = await open()
          const a = recompute.generate({ promptIds: prompt, maxTokens: 1, sampling: { temperature: 0 } })
          for await (const _ of a) void _
          const ra = await a.result
          row.recomputeTtftMs.push(ra.stats.ttftMs)
          await recompute.dispose()

          const restore = await open()
          const inner = snapshots.restorer(restore)
          let restoreMs = 0
          const b = restore.generate({
            promptIds: prompt,
            maxTokens: 1,
            sampling: { temperature: 0 },
            restore: async (p, live) => {
              const t = performance.now()
              const got = await inner(p, live)
              restoreMs += performance.now() - t
              return got
            }
          })
          for await (const _ of b) void _
          const rb = await b.result
          row.restoreTtftMs.push(rb.stats.ttftMs)
          row.restoreMs.push(restoreMs)
          if (rb.stats.restoredTokens !== n) throw new Error(`restored ${rb.stats.restoredTokens} of ${n} history tokens`)
          if (rb.tokens[0] !== ra.tokens[0]) row.sameFirstToken = false
          await restore.dispose()
        } finally {
          store.close()
        }
      }
      rows.push(row)
    }
    return { model: MODEL_LABELS[MODEL], format: KV_SNAPSHOT_FORMAT, newTokens: NEW_TOKENS, reps, rows }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** The rows as markdown. */
export function renderKvSnapshots(r: KvSnapshotRecord): string {
  const ms = (v: readonly number[]): string => median(v).toFixed(0)
  return [
    `## Continuing a conversation: KV snapshot restore vs recompute (${r.model}; snapshots in ${r.format}; a new message of ${r.newTokens} tokens; median of ${r.reps})`,
    '',
    '| history tokens | TTFT recompute ms | TTFT restore ms | speedup | restore ms (read + load) | save ms | snapshot bytes/token | same first token |',
    '|---:|---:|---:|---:|---:|---:|---:|:---:|',
    ...r.rows.map(
      (row) =>
        `| ${row.historyTokens} | ${ms(row.recomputeTtftMs)} | ${ms(row.restoreTtftMs)} | ${(median(row.recomputeTtftMs) / median(row.restoreTtftMs)).toFixed(1)}× | ${ms(row.restoreMs)} | ${ms(row.saveMs)} | ${(row.snapshotBytes / row.historyTokens).toFixed(0)} | ${row.sameFirstToken ? 'yes' : 'NO'} |`
    ),
    '',
    'Both sides open a fresh model worker (graph cached), so neither has a live cache; TTFT is the generation loop\'s (prompt in, first token out). The recompute prefills history + new message; the restore reads the history\'s blocks from SQLite, loads them into the worker and prefills only the new message. The largest history is 4,064 tokens: the 4k context less room for the new message.'
  ].join('\n')
}
