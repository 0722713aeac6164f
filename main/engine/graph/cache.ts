/**
 * @file Compiled graphs on disk, keyed by content: the model's fingerprint (sha256 over the config JSON,
 * every tensor's name, shape and encoding, and a sample of its bytes — its first, middle and last rows)
 * with the compiler version, the graph options, and which segment (op groups, I/O, row part) the graph
 * computes. Same model bytes -> same files, whatever path it was loaded from. The sample keeps a cached open
 * cheap (a few hundred small reads, not the whole file); `modelContentHash` over every byte is the full
 * check, recorded beside each graph when it is compiled (`graphHashPath`) for a later verification.
 * A graph's large weights live in an external-data file beside it (`<key>.onnx.data`).
 */
import { createHash } from 'node:crypto'
import { rmSync } from 'node:fs'
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { GRAPH_COMPILER_VERSION, type CompilableModel } from './compile'
import { resolveGraphOptions, type GraphOptions } from './emit-context'
import { ExternalWeights } from './external-data'
import { wholeModelSegment, type SegmentSpec } from './op-groups'
import type { GroupPart } from './partition'
import type { ShadowSpec } from './shadow'
import { sliceRows, tensorByteLength, tensorRowBytes, tensorRows, type Tensor } from '../model'

/** Folder for cached graphs: explicit, else $TANDEM_CACHE_DIR, else $XDG_CACHE_HOME/tandem/graphs, else ~/.cache/tandem/graphs. */
export function resolveGraphCacheDir(cacheDir?: string): string {
  if (cacheDir) return cacheDir
  const env = process.env.TANDEM_CACHE_DIR
  if (env) return env
  const xdg = process.env.XDG_CACHE_HOME
  if (xdg) return join(xdg, 'tandem', 'graphs')
  return join(homedir(), '.cache', 'tandem', 'graphs')
}

/** Every tensor of the model in a fixed order (the hash depends on it). */
function modelTensors(model: CompilableModel): Tensor[] {
  const w = model.weights
  const out: Tensor[] = [w.tokenEmbedding, w.finalNorm, w.output]
  for (const l of w.layers) {
    out.push(l.attnNorm, l.wq, l.wk, l.wv, l.wo, l.ffnNorm, l.wGate, l.wUp, l.wDown)
    for (const b of [l.bq, l.bk, l.bv]) if (b) out.push(b)
  }
  return out
}

function bytesOf(a: Int8Array | Float32Array | Uint8Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
}

function encodingOf(t: Tensor): string {
  const d = t.data
  return d.kind === 'int8-groups' ? `int8-groups/${d.groupSize}` : `${d.kind}/${d.dtype}`
}

function updateWithData(h: ReturnType<typeof createHash>, t: Tensor): void {
  const d = t.data
  if (d.kind === 'int8-groups') {
    h.update(bytesOf(d.values))
    h.update(bytesOf(d.scales))
  } else {
    h.update(d.bytes)
  }
}

/** Rows hashed per step of `contentHashSteps` (a tensor still in its file reads only those): about this many bytes. */
const HASH_STEP_BYTES = 16 << 20

/**
 * Feeds the model's content into `h` — its config, then every tensor's name, shape, encoding and bytes —
 * yielding the bytes done after each step of at most ~HASH_STEP_BYTES, so a caller can pause between steps.
 */
function* contentHashSteps(model: CompilableModel, h: ReturnType<typeof createHash>): Generator<number, void> {
  h.update(`${JSON.stringify(model.config)}\n`)
  let done = 0
  for (const t of modelTensors(model)) {
    h.update(`${t.name}|${t.shape.join('x')}|${encodingOf(t)}\n`)
    const bytes = tensorByteLength(t)
    const rows = t.shape.length === 2 ? tensorRows(t) : 0
    const step = rows > 0 ? Math.max(1, Math.floor(HASH_STEP_BYTES / (bytes / rows))) : 0
    // int8 groups hash all values, then all scales (row steps would interleave them); a row that is not whole
    // blocks cannot be sliced: both are hashed whole, as are 1-D tensors
    const stepped = rows > 1 && t.data.kind !== 'int8-groups' && tensorRowBytes(t) !== null
    if (!stepped) {
      updateWithData(h, t)
      done += bytes
      yield done
      continue
    }
    for (let r = 0; r < rows; r += step) {
      const part = sliceRows(t, r, Math.min(step, rows - r))
      if (part === null) throw new Error(`unreachable: ${t.name} rows are whole blocks`)
      updateWithData(h, part)
      done += tensorByteLength(part)
      yield done
    }
  }
}

/** Total bytes `contentHashSteps` hashes. */
function contentBytes(model: CompilableModel): number {
  return modelTensors(model).reduce((a, t) => a + tensorByteLength(t), 0)
}

/**
 * Hex sha256 of a model's content: its config and every tensor's bytes, a step of rows in memory at a time
 * (a pass over the whole file). `onBytes` hears the bytes hashed so far and the total.
 */
export function modelContentHash(model: CompilableModel, onBytes?: (doneBytes: number, totalBytes: number) => void): string {
  const h = createHash('sha256')
  const total = contentBytes(model)
  for (const done of contentHashSteps(model, h)) onBytes?.(done, total)
  return h.digest('hex')
}

/** modelContentHash, awaiting `pause()` between steps so the thread can serve other work meanwhile. */
export async function modelContentHashPaced(model: CompilableModel, pause: () => Promise<void>): Promise<string> {
  const h = createHash('sha256')
  const steps = contentHashSteps(model, h)
  while (!steps.next().done) await pause()
  return h.digest('hex')
}

/**
 * Hex sha256 of a model's config, every tensor's name, shape and encoding, and its first, middle and last
 * rows (a tensor still in its file reads only those; a 1-D tensor is read whole), the same whether the
 * model is in memory or in its file. What the graph cache is
 * keyed by: a few hundred small reads instead of the whole file, and any re-export, fine-tune or other
 * quantization changes the sampled rows. A change the sample misses is what `modelContentHash` is for.
 */
export function modelFingerprint(model: CompilableModel): string {
  const h = createHash('sha256')
  // keys sorted: a config that crossed a worker boundary (readModelConfig) lists its fields in another order
  const config = Object.fromEntries(Object.entries(model.config).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
  h.update(`fingerprint-2\n${JSON.stringify(config)}\n`)
  for (const t of modelTensors(model)) {
    h.update(`${t.name}|${t.shape.join('x')}|${encodingOf(t)}\n`)
    const rows = t.shape.length === 2 ? tensorRows(t) : 0
    const sampled = rows < 3 ? null : [0, rows >> 1, rows - 1].map((r) => sliceRows(t, r, 1))
    if (sampled === null || sampled.includes(null)) updateWithData(h, t)
    else for (const row of sampled) if (row !== null) updateWithData(h, row)
  }
  return h.digest('hex')
}

/** Hex sha256 identifying the graph `compileSegment(model, spec, options, part)` would produce for the model of `modelHash`. */
export function segmentCacheKey(modelHash: string, spec: SegmentSpec, options: GraphOptions, part?: GroupPart): string {
  const h = createHash('sha256')
  h.update(`${GRAPH_COMPILER_VERSION}\n${modelHash}\n`)
  h.update(`${JSON.stringify(resolveGraphOptions(options))}\n`)
  h.update(`${JSON.stringify({ groups: spec.groups, inputs: spec.inputs, outputs: spec.outputs, part: part ?? null })}\n`)
  return h.digest('hex')
}

/** Hex sha256 identifying the shadow graph `compileShadow(model, spec, options)` would produce (its weights' hot channels only). */
export function shadowCacheKey(modelHash: string, spec: ShadowSpec, options: GraphOptions): string {
  const h = createHash('sha256')
  h.update(`${GRAPH_COMPILER_VERSION}\n${modelHash}\nshadow\n`)
  h.update(`${JSON.stringify(resolveGraphOptions(options))}\n`)
  h.update(`${JSON.stringify({ layer: spec.layer, stage: spec.stage, hot: Object.entries(spec.hot).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) })}\n`)
  return h.digest('hex')
}

/** Hex sha256 identifying the graph `compileModel(model, options)` would produce. */
export function graphCacheKey(model: CompilableModel, options: GraphOptions): string {
  return segmentCacheKey(modelFingerprint(model), wholeModelSegment(model.config), options)
}

/** Path of the cached graph for `key` inside `dir`. */
export function cachedGraphPath(dir: string, key: string): string {
  return join(dir, `${key}.onnx`)
}

/** The external-data file of the graph at `graphPath` (its large weights). */
export function graphDataPath(graphPath: string): string {
  return `${graphPath}.data`
}

/** The file beside the graph at `graphPath` holding the full content hash of the model it was compiled from. */
export function graphHashPath(graphPath: string): string {
  return `${graphPath}.sha256`
}

/** The full content hash recorded for the graph at `graphPath`, or null when there is none. */
export async function recordedContentHash(graphPath: string): Promise<string | null> {
  try {
    const text = (await readFile(graphHashPath(graphPath), 'utf8')).trim()
    return /^[0-9a-f]{64}$/.test(text) ? text : null
  } catch {
    return null
  }
}

/** Removes a cached graph with its weights and hash (a stale or unreadable entry). */
export async function removeCachedGraph(graphPath: string): Promise<void> {
  await Promise.all([graphPath, graphDataPath(graphPath), graphHashPath(graphPath)].map((p) => rm(p, { force: true })))
}

/**
 * Compiles a graph into the cache: `build` emits it with its large weights streamed to the external-data
 * file (and returns the graph's own bytes); both are written under temporary names and renamed into place,
 * weights first, so a crash leaves either a complete entry or no graph (a weights file without its graph
 * is overwritten by the next compile). `contentHash`, when given, is called after `build` and its value
 * recorded beside the graph.
 */
export async function writeCompiledGraph(graphPath: string, build: (external: ExternalWeights) => Uint8Array, contentHash?: () => string): Promise<void> {
  await mkdir(dirname(graphPath), { recursive: true })
  const dataPath = graphDataPath(graphPath)
  const suffix = `.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`
  const external = new ExternalWeights(`${dataPath}${suffix}`, basename(dataPath))
  try {
    let bytes: Uint8Array
    try {
      bytes = build(external)
    } finally {
      external.close()
    }
    if (external.sizeBytes > 0) await rename(external.path, dataPath)
    if (contentHash !== undefined) await writeFile(graphHashPath(graphPath), `${contentHash()}\n`)
    await writeGraphAtomic(graphPath, bytes)
  } catch (err) {
    rmSync(external.path, { force: true })
    throw err
  }
}

/** True when a non-empty file exists at `path`. */
export async function cachedGraphExists(path: string): Promise<boolean> {
  try {
    const s = await stat(path)
    return s.isFile() && s.size > 0
  } catch {
    return false
  }
}

/** Writes `bytes` to `path` atomically (temp file in the same folder, then rename over any old file). */
export async function writeGraphAtomic(path: string, bytes: Uint8Array): Promise<void> {
  const dir = dirname(path)
  await mkdir(dir, { recursive: true })
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`
  try {
    await writeFile(tmp, bytes)
    await rename(tmp, path)
  } catch (err) {
    await rm(tmp, { force: true })
    throw err
  }
}

/**
 * Throws the file system's error (EACCES, EROFS, ENOTDIR, ENOSPC …) when `dir` cannot hold cached graphs:
 * it cannot be created, or a file cannot be written and renamed in it the way writeGraphAtomic does.
 * Callers check before opening a model, so an unwritable cache can be replaced instead of failing the open.
 */
export async function checkGraphCacheWritable(dir: string): Promise<void> {
  const probe = join(dir, `.write-check-${process.pid}-${Math.random().toString(36).slice(2)}`)
  await writeGraphAtomic(probe, new Uint8Array(1))
  await rm(probe, { force: true })
}
