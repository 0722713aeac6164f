/**
 * @file The benchmark's models: the shared stories260K GGUF and seeded random-weight Llama GGUFs written
 * by the test-fixture writer into a cache folder (bench/.models/), named by a hash of their spec and of
 * the writer's sources so a changed writer regenerates them and an unchanged one is reused.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { writeRandomGgufModel, type RandomGgufSpec } from '../test/fixtures/random-gguf'
import { repoRoot, sharedModel } from '../test/helpers/paths'

/** Models the benchmark knows, by the name used in `--models`. */
export type BenchModelId = 'stories260k' | 'f32' | 'q8_0' | 'q4_0' | 'q4_k_m' | '500m'

/** All ids, in run order. */
export const BENCH_MODEL_IDS: readonly BenchModelId[] = ['stories260k', 'f32', 'q8_0', 'q4_0', 'q4_k_m', '500m']

/** Seed of every random benchmark model (one number reproduces all of them). */
const MODEL_SEED = 20261130

/** The ~110M-parameter Llama shape of the issue (134M with its two 32000×768 embedding tables). */
const SHAPE_110M = {
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
  // llama.cpp's Q4_K_M mix (Q6_K for the output head and for attn_v/ffn_down in a third of the layers): what most people download
  q4_k_m: { ...SHAPE_110M, tensorType: 'q4_k_m', seed: MODEL_SEED },
  '500m': { ...SHAPE_500M, tensorType: 'q4_0', seed: MODEL_SEED }
}

/** Human labels for the result table. */
export const MODEL_LABELS: Readonly<Record<BenchModelId, string>> = {
  stories260k: 'stories260K F32',
  f32: '110M F32',
  q8_0: '110M Q8_0',
  q4_0: '110M Q4_0',
  q4_k_m: '110M Q4_K_M',
  '500m': '500M Q4_0'
}

/** Sources whose output the random models are: a change to any of them changes the file names. */
const WRITER_SOURCES = ['random-gguf.ts', 'quantize.ts', 'gguf-writer.ts', 'rng.ts', 'synthetic-vocab.ts']

/** A model file ready to benchmark. */
export interface BenchModelFile {
  readonly id: BenchModelId
  readonly label: string
  readonly path: string
  /** milliseconds spent writing it in this run; null when it was reused (or is the shared file) */
  readonly generatedMs: number | null
}

/** Hash of the spec and the writer's sources: 12 hex digits. */
async function specHash(spec: RandomGgufSpec): Promise<string> {
  const h = createHash('sha256')
  h.update(JSON.stringify(spec, Object.keys(spec).sort()))
  for (const f of WRITER_SOURCES) h.update(await readFile(join(repoRoot, 'test', 'fixtures', f)))
  return h.digest('hex').slice(0, 12)
}

/** Returns the model's file, writing it into `modelsDir` first when it is missing. */
export async function ensureBenchModel(id: BenchModelId, modelsDir: string, log: (line: string) => void): Promise<BenchModelFile> {
  const label = MODEL_LABELS[id]
  if (id === 'stories260k') {
    // the shared workplace models folder (TANDEM_TEST_MODELS or ../shared/models), never copied into the repo
    return { id, label, path: sharedModel('stories260K/stories260K.gguf'), generatedMs: null }
  }
  const spec = RANDOM_MODEL_SPECS[id]
  const prefix = `random-llama-${id}-`
  const name = `${prefix}${await specHash(spec)}.gguf`
  const path = join(modelsDir, name)
  if (existsSync(path)) return { id, label, path, generatedMs: null }

  await mkdir(modelsDir, { recursive: true })
  // files of an older spec or writer are hundreds of MB each: drop them
  for (const old of await readdir(modelsDir)) {
    if (old.startsWith(prefix) && old !== name) await rm(join(modelsDir, old), { force: true })
  }
  log(`writing ${label} -> ${path}`)
  const t0 = performance.now()
  const tmp = `${path}.${process.pid}.tmp`
  try {
    await writeRandomGgufModel(tmp, spec)
    await rename(tmp, path)
  } finally {
    await rm(tmp, { force: true })
  }
  const generatedMs = performance.now() - t0
  log(`wrote ${label} in ${(generatedMs / 1000).toFixed(1)} s`)
  return { id, label, path, generatedMs }
}
