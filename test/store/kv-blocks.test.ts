/**
 * @file The KV-block trie in a real SQLite file: a chain saved block by block is found again for any sequence
 * that begins with it (also after reopening the file), the longest match wins, a shared prefix is stored once,
 * another model's root never matches; flipped bytes, a truncated blob, a wrong layout and a misplaced block are
 * detected, reported and removed with what follows them; eviction keeps the budget least recently used first;
 * clearing and vacuuming give the space back.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { kvBlockKey, kvRootKey, openStore, type Store } from '../../main/store'
import { matchAndRead } from '../helpers/kv-match'
import { tempDir } from '../helpers/paths'

/** Bytes per token of the toy layout these tests write. */
const BPT = 8

/** Deterministic KV bytes for `count` tokens starting at `start` (distinct per position). */
function kv(start: number, count: number): Uint8Array {
  return Uint8Array.from({ length: count * BPT }, (_, i) => (start * 31 + i * 7) & 0xff)
}

/** Saves `tokens` in blocks of `block` tokens under `root`; returns the keys. */
function save(store: Store, root: string, tokens: readonly number[], block: number): string[] {
  const keys: string[] = []
  let parent = root
  for (let at = 0; at < tokens.length; at += block) {
    const part = tokens.slice(at, at + block)
    parent = store.kvBlocks.put(parent, at, part, kv(at, part.length))
    keys.push(parent)
  }
  return keys
}

const seq = (n: number, from = 1): number[] => Array.from({ length: n }, (_, i) => from + i)

let scratch: ReturnType<typeof tempDir>
let file: string
let store: Store
let clock = 1000

beforeEach(() => {
  scratch = tempDir('tandem-kv-')
  file = join(scratch.dir, 'tandem.db')
  clock = 1000
  store = openStore(file, { now: () => ++clock })
})

afterEach(() => {
  store.close()
  scratch.dispose()
})

describe('KV blocks', () => {
  it('finds the longest saved chain a sequence begins with, after a reopen too, and only for the same model', () => {
    const root = kvRootKey('model-a|f16')
    const history = seq(40)
    save(store, root, history, 16)
    // the next prompt continues the history: the whole chain (16 + 16 + 8) matches
    const next = [...history, 900, 901]
    let m = matchAndRead(store, root, next, BPT)
    expect(m.tokens).toBe(40)
    expect(m.blocks.map((b) => [b.start, b.tokenCount])).toEqual([
      [0, 16],
      [16, 16],
      [32, 8]
    ])
    expect(m.blocks[1].data).toEqual(kv(16, 16))
    expect(m.problems).toEqual([])
    // an edit at token 20 keeps only the first block
    const edited = [...history.slice(0, 20), 555, ...history.slice(21)]
    expect(matchAndRead(store, root, edited, BPT).tokens).toBe(16)
    // a sequence shorter than the tail block does not take it
    expect(matchAndRead(store, root, history.slice(0, 36), BPT).tokens).toBe(32)
    // another model (or KV format) has another root
    expect(matchAndRead(store, kvRootKey('model-b|f16'), next, BPT).tokens).toBe(0)
    store.close()
    store = openStore(file, { now: () => ++clock })
    m = matchAndRead(store, root, next, BPT)
    expect(m.tokens).toBe(40)
  })

  it('stores a shared prefix once: a second conversation with the same system prompt adds only its own blocks', () => {
    const root = kvRootKey('model-a|f16')
    const system = seq(32)
    save(store, root, [...system, ...seq(16, 100)], 16)
    const before = store.kvBlocks.usage()
    save(store, root, [...system, ...seq(16, 200)], 16)
    const after = store.kvBlocks.usage()
    expect(before.blocks).toBe(3)
    expect(after.blocks).toBe(4)
    expect(after.bytes - before.bytes).toBe(16 * BPT)
    // a branch: both continuations are there
    expect(matchAndRead(store, root, [...system, ...seq(16, 100)], BPT).tokens).toBe(48)
    expect(matchAndRead(store, root, [...system, ...seq(16, 200)], BPT).tokens).toBe(48)
  })

  it('detects flipped bytes, a truncated blob, another layout and a misplaced block; reports them and removes what follows', () => {
    const root = kvRootKey('model-a|f16')
    const tokens = seq(64)
    const keys = save(store, root, tokens, 16)
    // flip one byte of block 2
    store.db.prepare('UPDATE kv_block_data SET data = ? WHERE block_n = (SELECT n FROM kv_blocks WHERE key = ?)').run(Buffer.from(kv(32, 16).map((b, i) => (i === 5 ? b ^ 1 : b))), keys[2])
    let m = matchAndRead(store, root, tokens, BPT)
    expect(m.tokens).toBe(32)
    expect(m.problems).toEqual(['KV block at tokens 32..48: checksum mismatch'])
    // block 2 and its descendant are gone; the intact prefix stays
    expect(store.kvBlocks.usage().blocks).toBe(2)
    save(store, root, tokens, 16)
    store.db.prepare('UPDATE kv_block_data SET data = substr(data, 1, 40) WHERE block_n = (SELECT n FROM kv_blocks WHERE key = ?)').run(keys[1])
    m = matchAndRead(store, root, tokens, BPT)
    expect(m.tokens).toBe(16)
    expect(m.problems[0]).toMatch(/tokens 16\.\.32: truncated: 40 of 128 bytes/)
    save(store, root, tokens, 16)
    m = matchAndRead(store, root, tokens, BPT * 2)
    expect(m.tokens).toBe(0)
    expect(m.problems[0]).toMatch(/128 bytes where this model's layout needs 256/)
    // a block whose stored position disagrees with where the chain puts it
    save(store, root, tokens, 16)
    store.db.prepare('UPDATE kv_blocks SET start = 99 WHERE key = ?').run(keys[3])
    m = matchAndRead(store, root, tokens, BPT)
    expect(m.tokens).toBe(48)
    expect(m.problems[0]).toMatch(/stored for position 99/)
  })

  it('keys a block by its parent and token ids, never trusting a row whose key does not hash from them', () => {
    const root = kvRootKey('model-a|f16')
    const [first] = save(store, root, seq(16), 16)
    expect(first).toBe(kvBlockKey(root, seq(16)))
    store.db.prepare("UPDATE kv_blocks SET key = 'forged' WHERE key = ?").run(first)
    expect(matchAndRead(store, root, seq(16), BPT).tokens).toBe(0)
    expect(() => store.kvBlocks.put(root, 0, [], kv(0, 1))).toThrow(/1\.\.65536 tokens/)
    expect(() => store.kvBlocks.put(root, 0, [-1], kv(0, 1))).toThrow(/not a non-negative int32/)
  })

  it('evicts least recently used chains to the budget, leaves first; clearing and vacuuming shrink the file', () => {
    const root = kvRootKey('model-a|f16')
    const big = (from: number): number[] => seq(512, from)
    for (let c = 0; c < 6; c++) save(store, root, big(c * 1000 + 1), 128)
    // conversation 0 is used again: it becomes the most recent
    expect(matchAndRead(store, root, big(1), BPT).tokens).toBe(512)
    const total = store.kvBlocks.usage().bytes
    expect(total).toBe(6 * 512 * BPT)
    const removed = store.kvBlocks.evictTo(2 * 512 * BPT)
    expect(removed).toBe(16)
    expect(store.kvBlocks.usage().bytes).toBeLessThanOrEqual(2 * 512 * BPT)
    expect(matchAndRead(store, root, big(1), BPT).tokens).toBe(512)
    expect(matchAndRead(store, root, big(5001), BPT).tokens).toBe(512)
    expect(matchAndRead(store, root, big(1001), BPT).tokens).toBe(0)

    for (let c = 0; c < 40; c++) save(store, root, seq(4096, 10_000 * (c + 1)), 1024)
    store.db.pragma('wal_checkpoint(TRUNCATE)')
    const grown = statSync(file).size
    expect(store.kvBlocks.clear()).toBeGreaterThan(0)
    expect(store.kvBlocks.usage()).toEqual({ bytes: 0, blocks: 0 })
    expect(statSync(file).size).toBeLessThan(grown / 4)
  })
})
