/**
 * @file Compiled graphs on disk, keyed by content: the model's hash (sha256 over the config JSON and every
 * tensor's name, shape, encoding and bytes, streamed through the hash, never concatenated) with the
 * compiler version, the graph options, and which segment (op groups, I/O, row part) the graph computes.
 * Same model bytes -> same files, whatever path it was loaded from; the model is hashed once however
 * many segments a placement compiles.
 */
import { createHash } from 'node:crypto'
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { GRAPH_COMPILER_VERSION, type CompilableModel } from './compile'
import { resolveGraphOptions, type GraphOptions } from './emit-context'
import { wholeModelSegment, type SegmentSpec } from './op-groups'
import type { GroupPart } from './partition'
import type { Tensor } from '../model'

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

/** Hex sha256 of a model's content: its config and every tensor (the expensive part of a cache key; compute once). */
export function modelContentHash(model: CompilableModel): string {
  const h = createHash('sha256')
  h.update(`${JSON.stringify(model.config)}\n`)
  for (const t of modelTensors(model)) {
    const d = t.data
    const encoding = d.kind === 'int8-groups' ? `int8-groups/${d.groupSize}` : `${d.kind}/${d.dtype}`
    h.update(`${t.name}|${t.shape.join('x')}|${encoding}\n`)
    if (d.kind === 'int8-groups') {
      h.update(bytesOf(d.values))
      h.update(bytesOf(d.scales))
    } else {
      h.update(d.bytes)
    }
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

/** Hex sha256 identifying the graph `compileModel(model, options)` would produce. */
export function graphCacheKey(model: CompilableModel, options: GraphOptions): string {
  return segmentCacheKey(modelContentHash(model), wholeModelSegment(model.config), options)
}

/** Path of the cached graph for `key` inside `dir`. */
export function cachedGraphPath(dir: string, key: string): string {
  return join(dir, `${key}.onnx`)
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
