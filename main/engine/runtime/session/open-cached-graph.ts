/**
 * @file Compile-or-reuse: find the model's graph in the on-disk cache (by content hash) and open a CPU
 * session on it; on a miss — or when the cached file will not load (corrupt, truncated) — compile,
 * write atomically over it, and open that.
 */
import { createSession, type OrtSession } from '../../devices'
import {
  cachedGraphExists,
  cachedGraphPath,
  compileModel,
  graphCacheKey,
  resolveGraphCacheDir,
  writeGraphAtomic,
  type CompilableModel,
  type GraphOptions
} from '../../graph'
import type { ModelConfig } from '../../model'

/**
 * Context a runner gets when the caller sets no maxContext: the KV cache is allocated up front
 * (2 · nLayers · contextLength · kvDim floats; 1 GiB for a Llama-3-8B shape at 4096), so a model's
 * advertised 128K context is opt-in.
 */
export const DEFAULT_MAX_CONTEXT = 4096
/**
 * Positions the compiled RoPE tables cover (cos and sin, ropeDim/2 floats each per position; 32 MiB at
 * ropeDim 128). The table does not depend on maxContext, so changing it never forces a recompile.
 */
export const MAX_ROPE_TABLE_POSITIONS = 32768

/** The runner's context length and the graph's RoPE table length for a model and an optional cap. */
export function resolveContext(config: ModelConfig, maxContext?: number): { contextLength: number; ropeTableLength: number } {
  const ropeTableLength = Math.min(config.contextLength, MAX_ROPE_TABLE_POSITIONS)
  return { contextLength: Math.min(ropeTableLength, maxContext ?? DEFAULT_MAX_CONTEXT), ropeTableLength }
}

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
  /** intra-op threads (undefined: ORT default, all cores) */
  readonly threads?: number
  readonly graph: GraphOptions
  /** ORT session config entries (experiments, e.g. "session.disable_prepacking": "1") */
  readonly configEntries?: Readonly<Record<string, string>>
  /** write an ORT per-node profile with this path prefix (the session's endProfiling flushes it) */
  readonly profileFilePrefix?: string
}

/** Opens a CPU session for `model`, compiling only when no loadable cached graph exists. */
export async function openCachedGraph(model: CompilableModel, options: CachedGraphOptions): Promise<{ session: OrtSession; info: CompileInfo }> {
  const sessionConfig = {
    ep: 'cpu',
    intraOpThreads: options.threads,
    interOpThreads: 1,
    configEntries: options.configEntries,
    profileFilePrefix: options.profileFilePrefix
  }
  const t0 = performance.now()
  const key = graphCacheKey(model, options.graph)
  const graphPath = cachedGraphPath(resolveGraphCacheDir(options.cacheDir), key)
  const hashMs = performance.now() - t0

  if (await cachedGraphExists(graphPath)) {
    const t1 = performance.now()
    try {
      const session = await createSession(graphPath, sessionConfig)
      return { session, info: { cacheHit: true, compileMs: hashMs, sessionMs: performance.now() - t1, graphPath } }
    } catch {
      // unreadable cache entry (partial write by a crashed older version, disk corruption): rebuild it
    }
  }

  const t2 = performance.now()
  const bytes = compileModel(model, options.graph)
  await writeGraphAtomic(graphPath, bytes)
  const compileMs = hashMs + performance.now() - t2
  const t3 = performance.now()
  const session = await createSession(graphPath, sessionConfig)
  return { session, info: { cacheHit: false, compileMs, sessionMs: performance.now() - t3, graphPath } }
}
