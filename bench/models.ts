/**
 * @file The benchmark's models: the shared stories260K GGUF and seeded random-weight GGUFs in real
 * models' shapes (110M, Llama-3.2-1B/3B, Llama-3.1-8B, Qwen2.5-1.5B) written by the test-fixture writer
 * into a cache folder (bench/.models/, gitignored), named by a hash of their spec and of the writer's
 * sources so a changed writer regenerates them and an unchanged one is reused. A note beside each file
 * (<file>.json) keeps how long it took to write.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { LLAMA_3_1_8B, LLAMA_3_2_1B, LLAMA_3_2_3B, QWEN_2_5_1_5B } from '../test/fixtures/model-shapes'
import { writeRandomGgufModel, type RandomGgufSpec } from '../test/fixtures/random-gguf'
import { repoRoot, sharedModel } from '../test/helpers/paths'
import { isRecord } from './guards'

/** Models the benchmark knows, by the name used in `--models`. */
export type BenchModelId =
  | 'stories260k' | 'f32' | 'q8_0' | 'q4_0' | 'q4_k_m' | '500m' | '110m-4k'
  | '1b-q4_k_m' | '1b-q8_0' | 'qwen1.5b-q4_k_m' | 'qwen1.5b-q8_0' | '3b' | '8b'

/** All ids, in run order (small to large). */
export const BENCH_MODEL_IDS: readonly BenchModelId[] = [
  'stories260k', 'f32', 'q8_0', 'q4_0', 'q4_k_m', '500m', '110m-4k', '1b-q4_k_m', '1b-q8_0', 'qwen1.5b-q4_k_m', 'qwen1.5b-q8_0', '3b', '8b'
]

/** The default run: stories260K, the 110M shape in four encodings, the Llama-3.2-1B and Qwen2.5-1.5B shapes in Q4_K_M and Q8_0. */
export const DEFAULT_BENCH_MODELS: readonly BenchModelId[] = [
  'stories260k', 'f32', 'q8_0', 'q4_0', 'q4_k_m', '1b-q4_k_m', '1b-q8_0', 'qwen1.5b-q4_k_m', 'qwen1.5b-q8_0'
]

/** Names for several models at once in `--models`. */
export const BENCH_MODEL_GROUPS: Readonly<Record<string, readonly BenchModelId[]>> = {
  default: DEFAULT_BENCH_MODELS,
  '110m': ['f32', 'q8_0', 'q4_0', 'q4_k_m'],
  '1b': ['1b-q4_k_m', '1b-q8_0'],
  'qwen1.5b': ['qwen1.5b-q4_k_m', 'qwen1.5b-q8_0']
}

/** Seed of every random benchmark model (one number reproduces all of them). */
const MODEL_SEED = 20261130

/** The ~110M-parameter Llama shape of the issue (134M with its two 32000×768 embedding tables). */
export const SHAPE_110M = {
  architecture: 'llama',
  dim: 768,
  hiddenDim: 2048,
  nLayers: 12,
  nHeads: 12,
  nKvHeads: 12,
  vocabSize: 32000,
  contextLength: 2048
} as const

/** A ~500M-parameter Llama shape (headDim 128): 14 × 28.3M layer params + 2 × 49M embeddings. */
const SHAPE_500M = { ...SHAPE_110M, dim: 1536, hiddenDim: 4096, nLayers: 14, nHeads: 12, nKvHeads: 12 } as const

/** Generated models' specs. */
export const RANDOM_MODEL_SPECS: Readonly<Record<Exclude<BenchModelId, 'stories260k'>, RandomGgufSpec>> = {
  f32: { ...SHAPE_110M, tensorType: 'f32', seed: MODEL_SEED },
  q8_0: { ...SHAPE_110M, tensorType: 'q8_0', seed: MODEL_SEED },
  q4_0: { ...SHAPE_110M, tensorType: 'q4_0', seed: MODEL_SEED },
  q4_k_m: { ...SHAPE_110M, tensorType: 'q4_k_m', seed: MODEL_SEED },
  '500m': { ...SHAPE_500M, tensorType: 'q4_0', seed: MODEL_SEED },
  // the KV-snapshot rows: the 110M shape with a 4k context
  '110m-4k': { ...SHAPE_110M, contextLength: 4096, tensorType: 'q8_0', seed: MODEL_SEED },
  '1b-q4_k_m': { ...LLAMA_3_2_1B, tensorType: 'q4_k_m', seed: MODEL_SEED },
  '1b-q8_0': { ...LLAMA_3_2_1B, tensorType: 'q8_0', seed: MODEL_SEED },
  'qwen1.5b-q4_k_m': { ...QWEN_2_5_1_5B, tensorType: 'q4_k_m', seed: MODEL_SEED },
  'qwen1.5b-q8_0': { ...QWEN_2_5_1_5B, tensorType: 'q8_0', seed: MODEL_SEED },
  '3b': { ...LLAMA_3_2_3B, tensorType: 'q4_k_m', seed: MODEL_SEED },
  '8b': { ...LLAMA_3_1_8B, tensorType: 'q4_k_m', seed: MODEL_SEED }
}

/** Human labels for the result table. */
export const MODEL_LABELS: Readonly<Record<BenchModelId, string>> = {
  stories260k: 'stories260K F32',
  f32: '110M F32',
  q8_0: '110M Q8_0',
  q4_0: '110M Q4_0',
  q4_k_m: '110M Q4_K_M',
  '500m': '500M Q4_0',
  '110m-4k': '110M Q8_0, 4k context',
  '1b-q4_k_m': 'Llama-3.2-1B Q4_K_M',
  '1b-q8_0': 'Llama-3.2-1B Q8_0',
  'qwen1.5b-q4_k_m': 'Qwen2.5-1.5B Q4_K_M',
  'qwen1.5b-q8_0': 'Qwen2.5-1.5B Q8_0',
  '3b': 'Llama-3.2-3B Q4_K_M',
  '8b': 'Llama-3.1-8B Q4_K_M'
}

/**
 * Models of 1B parameters and more: each peer runs on one thread count only (all cores), so two
 * copies of a multi-GB model are in memory at a time rather than four, and the table stays within an hour.
 */
export function isLargeBenchModel(id: BenchModelId): boolean {
  return id === '1b-q4_k_m' || id === '1b-q8_0' || id === 'qwen1.5b-q4_k_m' || id === 'qwen1.5b-q8_0' || id === '3b' || id === '8b'
}

/** Sources whose output the random models are: a change to any of them changes the file names. */
const WRITER_SOURCES = ['random-gguf.ts', 'quantize.ts', 'gguf-writer.ts', 'rng.ts', 'synthetic-vocab.ts', 'model-shapes.ts']

/** A model file ready to benchmark. */
export interface BenchModelFile {
  readonly id: BenchModelId
  readonly label: string
  readonly path: string
  readonly sizeBytes: number
  /** milliseconds it took to write (in this run or when it was written; null for the shared file or when unknown) */
  readonly generatedMs: number | null
  /** whether this run wrote it */
  readonly generatedNow: boolean
}

/** Hash of the spec and the writer's sources: 12 hex digits. */
async function specHash(spec: RandomGgufSpec): Promise<string> {
  const h = createHash('sha256')
  h.update(JSON.stringify(spec, Object.keys(spec).sort()))
  for (const f of WRITER_SOURCES) h.update(await readFile(join(repoRoot, 'test', 'fixtures', f)))
  return h.digest('hex').slice(0, 12)
}

/** How long a cached file took to write, from the note beside it (null when there is none or it is unreadable). */
async function readWriteNote(path: string): Promise<number | null> {
  try {
    const note: unknown = JSON.parse(await readFile(`${path}.json`, 'utf8'))
    return isRecord(note) && typeof note.generatedMs === 'number' ? note.generatedMs : null
  } catch {
    return null
  }
}

/** Returns the model's file, writing it into `modelsDir` first when it is missing. */
export async function ensureBenchModel(id: BenchModelId, modelsDir: string, log: (line: string) => void): Promise<BenchModelFile> {
  const label = MODEL_LABELS[id]
  if (id === 'stories260k') {
    // the shared workplace models folder (TANDEM_TEST_MODELS or ../shared/models), never copied into the repo
    const path = sharedModel('stories260K/stories260K.gguf')
    return { id, label, path, sizeBytes: (await stat(path)).size, generatedMs: null, generatedNow: false }
  }
  const spec = RANDOM_MODEL_SPECS[id]
  const prefix = `random-${spec.architecture}-${id}-`
  const name = `${prefix}${await specHash(spec)}.gguf`
  const path = join(modelsDir, name)
  if (existsSync(path)) return { id, label, path, sizeBytes: (await stat(path)).size, generatedMs: await readWriteNote(path), generatedNow: false }

  await mkdir(modelsDir, { recursive: true })
  // files of an older spec or writer are hundreds of MB to GBs each: drop them
  for (const old of await readdir(modelsDir)) {
    if (old.startsWith(prefix) && !old.startsWith(name)) await rm(join(modelsDir, old), { force: true })
  }
  log(`writing ${label} -> ${path}`)
  const t0 = performance.now()
  const tmp = `${path}.${process.pid}.tmp`
  let sizeBytes: number
  try {
    sizeBytes = await writeRandomGgufModel(tmp, spec)
    await rename(tmp, path)
  } finally {
    await rm(tmp, { force: true })
  }
  const generatedMs = performance.now() - t0
  await writeFile(`${path}.json`, `${JSON.stringify({ generatedMs: Math.round(generatedMs), sizeBytes, writtenAt: new Date().toISOString() })}\n`)
  log(`wrote ${label} in ${(generatedMs / 1000).toFixed(1)} s, ${(sizeBytes / 1e9).toFixed(2)} GB`)
  return { id, label, path, sizeBytes, generatedMs, generatedNow: true }
}
