/**
 * @file KV-cache snapshots of conversations (issue #14): after a reply the model's cache is saved to SQLite as blocks
 * (store/kv-blocks.ts) keyed by the token prefix they continue, and a later prompt that begins with a saved prefix —
 * the same conversation after a restart, an edited message, a regenerated answer, a branch, another conversation
 * with the same system prompt — takes those positions from the snapshot instead of computing them.
 *
 * The snapshot's root is the model fingerprint, the graph compiler, the KV layout, the stored format and how the
 * cache is computed (the single session's device, or the device workers' placement and W8A8 calibration), so nothing
 * computed another way can match. Blocks are checked (token ids, length, checksum)
 * as they are read; a block that fails is logged with the reason and removed, and its positions are computed.
 * Saving runs between generations (TextModel.withCache), never during one, and only writes blocks not yet stored.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { GRAPH_COMPILER_VERSION, kvBlockBytes, kvLayoutOf, KV_SNAPSHOT_LAYOUT_VERSION, type KvFormat, type TextModel } from '../engine'
import { kvBlockKey, kvRootKey, type KvBlockStore } from '../store'
import type { KvSnapshotUsage } from '../../preload/api'
import { errorMessage } from './errors'

/** Positions per snapshot block: small enough that an edit keeps most of a long history, large enough to keep rows few. */
export const KV_BLOCK_TOKENS = 128
/**
 * How values are stored: float32, the worker's cache bit for bit, so a restored conversation continues exactly as
 * it would have in the session that saved it. The compact formats were measured and are not the default: float16
 * changed a seeded random model's greedy continuation (1 of 4 prompts, at token 41 of 48) and int8 stories260K's
 * (1 of 4, at token 5) — `npm run bench -- --only kv-snapshots`, which also shows float16 restoring about as fast
 * as float32 and int8 up to 1.5× faster on this project's machines (moving bytes into fresh memory dominates). They
 * would hold 2–4× more history in the same budget.
 */
export const KV_SNAPSHOT_FORMAT: KvFormat = 'f32'

/** What KvSnapshots needs from the app. */
export interface KvSnapshotOptions {
  /** bytes the snapshots may use (read at each save) */
  readonly budgetBytes: () => number
  /** where a snapshot that could not be used says why */
  readonly log: (line: string) => void
  /** how values are stored (default KV_SNAPSHOT_FORMAT; the bench and tests measure the others) */
  readonly format?: KvFormat
}

/** Saves and restores the KV caches of the models the chat runs. */
export class KvSnapshots {
  private readonly format: KvFormat

  constructor(
    private readonly blocks: KvBlockStore,
    private readonly options: KvSnapshotOptions
  ) {
    this.format = options.format ?? KV_SNAPSHOT_FORMAT
  }

  /** The restore hook of a generation on `model` (GenerateRequest.restore). */
  restorer(model: TextModel): (prompt: readonly number[], live: number) => Promise<number> {
    return async (prompt, live) => {
      const root = this.rootOf(model)
      const w = model.worker
      const layout = kvLayoutOf(model.info.config)
      // the last prompt token is always computed: its logits start the reply
      const m = this.blocks.match(root, prompt.slice(0, prompt.length - 1))
      const problems = [...m.problems]
      // Each block is read and checked here while the worker loads the one before: posted in order, awaited at the
      // end; the event loop gets a turn between blocks, so a long restore never holds up the app's other requests.
      const writes: Promise<void>[] = []
      let restored = live
      for (const b of m.blocks) {
        if (b.start + b.tokenCount <= live) continue
        const data = this.blocks.read(b, kvBlockBytes(layout, this.format, b.tokenCount))
        if (typeof data === 'string') {
          problems.push(data)
          break
        }
        // room for the whole prompt at once: the cache grows once, not per block
        const write = w.writeKv(b.start, b.tokenCount, this.format, data, prompt.length)
        // handled below, after the loop; marked now so a failure during a later turn is not an unhandled rejection
        write.catch(() => undefined)
        writes.push(write)
        restored = b.start + b.tokenCount
        await nextTurn()
      }
      for (const p of problems) this.options.log(`KV snapshot not used: ${p}; computing those positions instead`)
      try {
        await Promise.all(writes)
        return restored
      } catch (err) {
        await Promise.allSettled(writes)
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

  /**
   * Saves what `model`'s cache holds, between generations, block by block; a message sent meanwhile stops it after
   * the block in hand (the next save, after that reply, writes the rest). Resolves with the blocks written.
   */
  save(model: TextModel): Promise<number> {
    return model.withCache(async (cached, interrupted) => {
      const root = this.rootOf(model)
      if (cached.length === 0) return 0
      if (this.options.budgetBytes() === 0) {
        this.blocks.evictTo(0)
        return 0
      }
      let parent = root
      let written = 0
      for (let at = 0; at < cached.length && !interrupted(); at += KV_BLOCK_TOKENS) {
        const part = cached.slice(at, at + KV_BLOCK_TOKENS)
        const key = kvBlockKey(parent, part)
        if (!this.blocks.has(key)) {
          this.blocks.put(parent, at, part, await model.worker.readKv(at, part.length, this.format))
          written++
        }
        parent = key
      }
      this.blocks.evictTo(this.options.budgetBytes())
      return written
    })
  }

  /** The chain root of `model`'s snapshots: the weights, the compiler, the KV layout and format, how the cache is computed. */
  private rootOf(model: TextModel): string {
    const w = model.worker
    const c = model.info.config
    return kvRootKey(`${w.fingerprint}|${GRAPH_COMPILER_VERSION}|kv-${KV_SNAPSHOT_LAYOUT_VERSION} ${c.nLayers}x${c.nKvHeads}x${c.headDim}|${this.format}|${w.kvSource}`)
  }
}
