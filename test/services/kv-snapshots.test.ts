/**
 * @file KV snapshots end to end below the chat: a real model worker, a real SQLite file. A reply's cache is saved,
 * the model is closed and opened again (a restart), and a prompt that continues the conversation is answered from
 * the snapshot — greedily the same tokens as a model that computes everything — for both shared trained models and
 * after an edit (the unchanged prefix only); a damaged block is logged, skipped and recomputed with the same output;
 * another model's snapshots never match; a message sent meanwhile stops a save; a placement on device workers saves
 * and restores its own snapshots.
 */
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { TextModel, type GenerationResult } from '../../main/engine'
import { discoverDevices } from '../../main/engine/devices'
import { loadModel } from '../../main/engine/model'
import { parsePlacement, weightInfoOf } from '../../main/engine/plan'
import { KV_BLOCK_TOKENS, KvSnapshots } from '../../main/services/kv-snapshots'
import { openStore, type Store } from '../../main/store'
import { sharedModel, tempDir } from '../helpers/paths'

const scratch = tempDir('tandem-kv-snapshots-')
afterAll(() => scratch.dispose())

const STORY = 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park with her friends. One day, she found a shiny red ball under a big tree. '

async function greedy(model: TextModel, promptIds: readonly number[], snapshots: KvSnapshots | null, maxTokens = 24): Promise<GenerationResult> {
  const g = model.generate({ promptIds, maxTokens, sampling: { temperature: 0 }, ...(snapshots !== null && { restore: snapshots.restorer(model) }) })
  for await (const _ of g) void _
  return g.result
}

async function open(path: string): Promise<TextModel> {
  return TextModel.open(path, { cacheDir: join(scratch.dir, 'graphs'), threads: 1, maxContext: 1024 })
}

describe('KV snapshots', () => {
  for (const name of ['stories260K/stories260K.gguf', 'tinystories-656K']) {
    it(`${name}: after a restart the continuation restores the saved prefix and answers as a full recompute does`, async () => {
      const file = join(scratch.dir, `${name.replace(/\W/g, '_')}.db`)
      const log: string[] = []
      let store: Store = openStore(file)
      let snapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => 1 << 30, log: (l) => log.push(l) })
      let model = await open(sharedModel(name))
      const first = model.encodePrompt(STORY.repeat(8))
      const reply = await greedy(model, first, snapshots)
      await snapshots.save(model)
      await model.dispose()
      store.close()
      const saved = first.length + reply.tokens.length - 1
      expect(saved).toBeGreaterThan(KV_BLOCK_TOKENS)

      // a new process's worth of state: a new store connection, a new model worker
      store = openStore(file)
      snapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => 1 << 30, log: (l) => log.push(l) })
      model = await open(sharedModel(name))
      const next = [...first, ...reply.tokens, ...model.encodePrompt(' The next day').slice(1)]
      const restored = await greedy(model, next, snapshots)
      await model.dispose()
      const fresh = await open(sharedModel(name))
      const recomputed = await greedy(fresh, next, null)
      await fresh.dispose()
      expect(restored.stats.restoredTokens).toBe(Math.min(saved, next.length - 1))
      expect(restored.stats.reusedTokens).toBe(restored.stats.restoredTokens)
      expect(restored.stats.prefillTokens).toBe(next.length - restored.stats.reusedTokens)
      expect(recomputed.stats.restoredTokens).toBe(0)
      expect(restored.tokens).toEqual(recomputed.tokens)

      // an edit inside the second block: only the first block is reused
      model = await open(sharedModel(name))
      const edited = [...next]
      const at = KV_BLOCK_TOKENS + 10
      expect(edited.length).toBeGreaterThan(at + 1)
      edited[at] = edited[at] === 1 ? 2 : 1
      const afterEdit = await greedy(model, edited, snapshots)
      expect(afterEdit.stats.restoredTokens).toBe(KV_BLOCK_TOKENS)

      // zeroed bytes in the second block: logged, removed, computed — the same reply as a recompute
      expect(store.db.prepare('UPDATE kv_block_data SET data = zeroblob(length(data)) WHERE block_n IN (SELECT n FROM kv_blocks WHERE start = ?)').run(KV_BLOCK_TOKENS).changes).toBe(1)
      const damaged = await greedy(model, next, snapshots)
      expect(log.some((l) => /checksum mismatch; computing those positions instead/.test(l))).toBe(true)
      expect(damaged.stats.restoredTokens).toBe(0)
      expect(damaged.tokens).toEqual(recomputed.tokens)
      await model.dispose()
      store.close()
    }, 180_000)
  }

  it('a message sent while a save waits its turn stops the save, and the next save writes what it left', async () => {
    const store = openStore(join(scratch.dir, 'yield.db'))
    const snapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => 1 << 30, log: () => undefined })
    const model = await open(sharedModel('stories260K/stories260K.gguf'))
    try {
      const prompt = model.encodePrompt(STORY.repeat(5))
      await greedy(model, prompt, null, 4)
      // the save is queued first; the next message is queued behind it before the save's turn comes
      const saving = snapshots.save(model)
      const next = greedy(model, [...prompt, ...model.encodePrompt(' The end').slice(1)], null, 4)
      expect(await saving).toBe(0)
      expect((await next).tokens.length).toBeGreaterThan(0)
      expect(store.kvBlocks.usage().blocks).toBe(0)
      // with nothing waiting, the next save writes every block of the cache
      const written = await snapshots.save(model)
      expect(written).toBeGreaterThanOrEqual(Math.floor(prompt.length / KV_BLOCK_TOKENS))
      expect(store.kvBlocks.usage().blocks).toBe(written)
      expect(await snapshots.save(model)).toBe(0)
    } finally {
      await model.dispose()
      store.close()
    }
  }, 120_000)

  it('a placement on device workers saves and restores too; the single session does not take its snapshots', async () => {
    const store = openStore(join(scratch.dir, 'placement.db'))
    const snapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => 1 << 30, log: () => undefined })
    const path = sharedModel('stories260K/stories260K.gguf')
    const header = await loadModel(path)
    if (!header.weights) throw new Error('no weights')
    const devices = await discoverDevices()
    const placement = parsePlacement(
      { version: 1, name: 'two CPU workers', prefillChunkTokens: 64, phases: { prefill: { device: 'cpu', groups: [{ layer: 1, group: 'attention', device: 'cpu-2' }, { layer: 1, group: 'ffn', device: 'cpu-2' }] }, decode: { device: 'cpu-2' } } },
      header.config,
      devices,
      weightInfoOf(header.weights)
    )
    const openPlaced = (): Promise<TextModel> => TextModel.open(path, { cacheDir: join(scratch.dir, 'graphs'), threads: 1, maxContext: 1024, placement, devices })
    let model = await openPlaced()
    const first = model.encodePrompt(STORY.repeat(6))
    const reply = await greedy(model, first, snapshots, 8)
    expect(await snapshots.save(model)).toBeGreaterThan(1)
    await model.dispose()
    const next = [...first, ...reply.tokens, ...model.encodePrompt(' The next day').slice(1)]
    model = await openPlaced()
    const restored = await greedy(model, next, snapshots)
    await model.dispose()
    expect(restored.stats.restoredTokens).toBeGreaterThanOrEqual(2 * KV_BLOCK_TOKENS)
    model = await openPlaced()
    const recomputed = await greedy(model, next, null)
    await model.dispose()
    expect(restored.tokens).toEqual(recomputed.tokens)
    // the single CPU session computes the cache another way: it never takes these blocks
    const single = await open(path)
    expect((await greedy(single, next, snapshots, 4)).stats.restoredTokens).toBe(0)
    await single.dispose()
    store.close()
  }, 180_000)

  it("another model's snapshots never match", async () => {
    const store = openStore(join(scratch.dir, 'shared.db'))
    const snapshots = new KvSnapshots(store.kvBlocks, { budgetBytes: () => 1 << 30, log: () => undefined })
    const a = await open(sharedModel('stories260K/stories260K.gguf'))
    const prompt = a.encodePrompt(STORY.repeat(2))
    await greedy(a, prompt, snapshots, 4)
    await snapshots.save(a)
    await a.dispose()
    const other = await open(sharedModel('tinystories-656K'))
    const o = await greedy(other, prompt.filter((t) => t < other.info.config.vocabSize), snapshots, 4)
    await other.dispose()
    expect(o.stats.restoredTokens).toBe(0)
    store.close()
  }, 180_000)
})
