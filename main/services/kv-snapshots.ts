/**
 * @file KV-cache snapshots of conversations (issue #14): after a reply the model's cache is saved to SQLite as blocks
 * (store/kv-blocks.ts) keyed by the token prefix they continue, and a later prompt that begins with a saved prefix —
 * the same conversation after a restart, an edited message, a regenerated answer, a branch, another conversation
 * with the same system prompt — takes those positions from the snapshot instead of computing them.
 *
 * The snapshot's root is the model fingerprint, the graph compiler, the KV layout, the stored format and the device
 * that holds the cache, so nothing computed another way can match. Blocks are checked (token ids, length, checksum)
 * as they are read; a block that fails is logged with the reason and removed, and its positions are computed.
 * Saving runs between generations (TextModel.withCache), never during one, and only writes blocks not yet stored.
 */
import { GRAPH_COMPILER_VERSION, kvBytesPerToken, kvLayoutOf, type KvFormat, type TextModel } from '../engine'
import { kvBlockKey, kvRootKey, type KvBlockStore } from '../store'
import type { KvSnapshotUsage } from '../../preload/api'
import { errorMessage } from './errors'

/** Positions per snapshot block: small enough that an edit keeps most of a long history, large enough to keep rows few. */
export const KV_BLOCK_TOKENS = 128
/**
 * How values are stored. float16 halves the bytes; restored and recomputed greedy continuations were the same on
 * the shared models (test/services/kv-snapshots.test.ts), as llama.cpp's default f16 KV cache suggests.
 */
export const KV_SNAPSHOT_FORMAT: KvFormat = 'f16'

/** What KvSnapshots needs from the app. */
export interface KvSnapshotOptions {
  /** bytes the snapshots may use (read at each save) */
  readonly budgetBytes: () => number
  /** where a snapshot that could not be used says why */
  readonly log: (line: string) => void
}

/** Saves and restores the KV caches of the models the chat runs. */
export class KvSnapshots {
  constructor(
    private readonly blocks: KvBlockStore,
    private readonly options: KvSnapshotOptions
  ) {}

  /** The restore hook of a generation on `model` (GenerateRequest.restore). */
  restorer(model: TextModel): (prompt: readonly number[], live: number) => Promise<number> {
    return async (prompt, live) => {
      const root = this.rootOf(model)
      if (root === null) return live
      const w = model.worker
      // the last prompt token is always computed: its logits start the reply
      const m = this.blocks.match(root, prompt.slice(0, prompt.length - 1), this.bytesPerToken(model))
      for (const p of m.problems) this.options.log(`KV snapshot not used: ${p}; computing those positions instead`)
      if (m.tokens <= live) return live
      try {
        // room for the whole prompt at once: the cache grows once, not per block
        for (const b of m.blocks) if (b.start + b.tokenCount > live) await w.writeKv(b.start, b.tokenCount, KV_SNAPSHOT_FORMAT, b.data, prompt.length)
        return m.tokens
      } catch (err) {
        this.options.log(`KV snapshot not used: ${errorMessage(err)}; computing those positions instead`)
        await w.truncate(live)
        return live
      }
    }
  }

  /** The space the snapshots use, and the budget. */
  usage(): KvSnapshotUsage {
    return { ...this.blocks.usage(), budgetBytes: this.options.budgetBytes() }
  }

  /** Removes every snapshot and gives the space back to the disk. */
  clear(): KvSnapshotUsage {
    this.blocks.clear()
    return this.usage()
  }

  /** Saves what `model`'s cache holds, between generations; resolves once the new blocks are stored. */
  save(model: TextModel): Promise<void> {
    return model.withCache(async (cached) => {
      const root = this.rootOf(model)
      if (root === null || cached.length === 0) return
      if (this.options.budgetBytes() === 0) {
        this.blocks.evictTo(0)
        return
      }
      let parent = root
      for (let at = 0; at < cached.length; at += KV_BLOCK_TOKENS) {
        const part = cached.slice(at, at + KV_BLOCK_TOKENS)
        const key = kvBlockKey(parent, part)
        if (!this.blocks.has(key)) this.blocks.put(parent, at, part, await model.worker.readKv(at, part.length, KV_SNAPSHOT_FORMAT))
        parent = key
      }
      this.blocks.evictTo(this.options.budgetBytes())
    })
  }

  /** The chain root of `model`'s snapshots, or null when its engine cannot hand out its cache. */
  private rootOf(model: TextModel): string | null {
    const w = model.worker
    if (!w.kvSnapshots) return null
    const c = model.info.config
    const devices = w.usage().devices.map((d) => d.id).join('+')
    return kvRootKey(`${w.fingerprint}|${GRAPH_COMPILER_VERSION}|kv ${c.nLayers}x${c.nKvHeads}x${c.headDim}|${KV_SNAPSHOT_FORMAT}|${devices}`)
  }

  private bytesPerToken(model: TextModel): number {
    return kvBytesPerToken(kvLayoutOf(model.info.config), KV_SNAPSHOT_FORMAT)
  }
}
