/**
 * @file Compile-or-reuse: find the model's graph in the on-disk cache (by the model's fingerprint) and open
 * a CPU session on it; on a miss — or when the cached file will not load (corrupt, truncated) — compile
 * (large weights streamed to the graph's external-data file), write atomically over it, and open that.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { createCpuSession, type OrtSession } from '../../devices'
import {
  cachedGraphExists,
  cachedGraphPath,
  compileModel,
  graphCacheKey,
  modelContentHash,
  modelContentHashPaced,
  recordedContentHash,
  removeCachedGraph,
  resolveGraphCacheDir,
  writeCompiledGraph,
  type CompilableModel,
  type CompileSink,
  type GraphOptions
} from '../../graph'
import { collectGarbage } from './collect-garbage'
import type { LoadProgressListener } from '../load-progress'

/** How the graph was obtained, with timings in milliseconds. */
export interface CompileInfo {
  /** true when a cached graph was loaded without compiling */
  readonly cacheHit: boolean
  /** hashing the model, plus compiling and writing the graph on a miss */
  readonly compileMs: number
  /** ONNX Runtime session creation from the graph file */
  readonly sessionMs: number
  readonly graphPath: string
}

/** Where and how to open the graph. */
export interface CachedGraphOptions {
  readonly cacheDir?: string
  /** intra-op threads (undefined: the physical cores, devices/cpu-cores.ts) */
  readonly threads?: number
  readonly graph: GraphOptions
  /** ORT session config entries (experiments, e.g. "session.disable_prepacking": "1") */
  readonly configEntries?: Readonly<Record<string, string>>
  /** write an ORT per-node profile with this path prefix (the session's endProfiling flushes it) */
  readonly profileFilePrefix?: string
  /** hears what the open is doing (compiling, reading, preparing) */
  readonly onProgress?: LoadProgressListener
}

/** What openOrCompile does besides compiling and opening. */
export interface CompileHooks {
  /** the model's full content hash (recorded beside a graph compiled here); reports bytes hashed so far */
  readonly contentHash?: (onBytes: (done: number, total: number) => void) => string
  readonly onProgress?: LoadProgressListener
}

/** How one cached graph was opened, in milliseconds. */
export interface CachedOpen<T> {
  readonly value: T
  readonly cacheHit: boolean
  /** compiling and writing the graph (0 on a hit) */
  readonly compileMs: number
  /** opening it (the session creation) */
  readonly openMs: number
}

/**
 * Opens the graph cached at `path` with `open`; on a miss — or when the cached file will not open (a partial
 * write by a crashed older version, disk corruption) — compiles it, writes it atomically over the old file,
 * and opens that. The single session and every device-worker segment go through here.
 */
export async function openOrCompile<T>(path: string, compile: (sink: CompileSink) => Uint8Array, open: (path: string) => Promise<T>, hooks: CompileHooks = {}): Promise<CachedOpen<T>> {
  const { contentHash, onProgress } = hooks
  const preparing = (): void => onProgress?.({ stage: 'preparing', done: 0, total: 0 })
  if (await cachedGraphExists(path)) {
    preparing()
    const t0 = performance.now()
    try {
      return { value: await open(path), cacheHit: true, compileMs: 0, openMs: performance.now() - t0 }
    } catch {
      // unreadable cache entry: rebuild it below (a graph the device refuses fails again there, with its error)
    }
  }
  const t1 = performance.now()
  const onGroup = (done: number, total: number): void => onProgress?.({ stage: 'compiling', done, total })
  const hash = contentHash && ((): string => contentHash((done, total) => onProgress?.({ stage: 'reading', done, total })))
  await writeCompiledGraph(path, (external) => compile({ external, onGroup }), hash)
  // the compiler's buffers (every tensor read and packed once) go before ONNX Runtime makes its copy
  collectGarbage()
  const compileMs = performance.now() - t1
  preparing()
  const t2 = performance.now()
  return { value: await open(path), cacheHit: false, compileMs, openMs: performance.now() - t2 }
}

/** Opens a CPU session for `model`, compiling only when no loadable cached graph exists. */
export async function openCachedGraph(model: CompilableModel, options: CachedGraphOptions): Promise<{ session: OrtSession; info: CompileInfo }> {
  const sessionConfig = {
    intraOpThreads: options.threads,
    interOpThreads: 1,
    configEntries: options.configEntries,
    profileFilePrefix: options.profileFilePrefix
  }
  const t0 = performance.now()
  const graphPath = cachedGraphPath(resolveGraphCacheDir(options.cacheDir), graphCacheKey(model, options.graph))
  const hashMs = performance.now() - t0
  const opened = await openOrCompile(graphPath, (sink) => compileModel(model, options.graph, sink), (path) => createCpuSession(path, sessionConfig), {
    contentHash: (onBytes) => modelContentHash(model, onBytes),
    onProgress: options.onProgress
  })
  return { session: opened.value, info: { cacheHit: opened.cacheHit, compileMs: hashMs + opened.compileMs, sessionMs: opened.openMs, graphPath } }
}

/** How much longer verifyCachedGraph idles than it works (see there). */
const VERIFY_IDLE_FACTOR = 4

/** What the full check of a cached graph found: the bytes match, the model changed (entry removed), or nothing to check against. */
export const GRAPH_VERIFICATIONS = ['verified', 'stale', 'unchecked'] as const
export type GraphVerification = (typeof GRAPH_VERIFICATIONS)[number]

/**
 * The full check behind the cache's sampled fingerprint: hashes every byte of `model` in steps of ~16 MiB and
 * compares it with the hash recorded when the graph at `graphPath` was compiled. Each step waits for
 * `whenIdle` (the caller's thread has nothing better to do) and idles after itself, so requests keep their
 * speed. A mismatch — the file was rewritten in place and the sample missed it — removes the entry, so the next
 * open compiles again. 'unchecked' when no hash was recorded (a graph compiled elsewhere).
 */
export async function verifyCachedGraph(model: CompilableModel, graphPath: string, whenIdle: () => Promise<void> = async () => {}): Promise<GraphVerification> {
  const recorded = await recordedContentHash(graphPath)
  if (recorded === null) return 'unchecked'
  // after each step, idle VERIFY_IDLE_FACTOR times as long as the step took: the check uses at most a fifth of
  // one core, so replies that run meanwhile keep their speed (unpaced, a 1B model's first replies ran 2-3x slower)
  let stepStart = performance.now()
  const pause = async (): Promise<void> => {
    const spent = performance.now() - stepStart
    await sleep(Math.max(1, spent * VERIFY_IDLE_FACTOR))
    await whenIdle()
    stepStart = performance.now()
  }
  await whenIdle()
  const actual = await modelContentHashPaced(model, pause)
  if (actual === recorded) return 'verified'
  await removeCachedGraph(graphPath)
  return 'stale'
}
