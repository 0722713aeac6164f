import { describe, expect, it } from 'vitest'
import { KV_CAPACITY_STEP, KvCache, MIN_KV_CAPACITY } from '../../main/engine/runtime/session/kv-cache'

/** n position-major rows [n, nKv·hd] with distinct values. */
const rows = (base: number, n: number, width: number): Float32Array => Float32Array.from({ length: n * width }, (_, i) => base + i)

describe('KvCache', () => {
  it('stores rows in the graph layouts (keys [nKv, hd, C], values [nKv, C, hd]), hands out its own buffers, truncates', () => {
    const cache = new KvCache({ nLayers: 2, nKvHeads: 2, headDim: 3, maxLen: 5 })
    expect(cache.length).toBe(0)
    expect(cache.capacity).toBe(5) // min(maxLen, MIN_KV_CAPACITY)
    for (let l = 0; l < 2; l++) cache.write(l, rows(100 * l, 2, 6), rows(100 * l + 50, 2, 6), 2)
    cache.commit(2)
    const p = cache.past(1)
    expect(p.keys.length).toBe(2 * 3 * 5)
    // key (pos 1, head 1, dim 2) = row 1 value 1·3+2 -> keys[(1·3 + 2)·C + 1]
    expect(p.keys[(1 * 3 + 2) * 5 + 1]).toBe(100 + 6 + 5)
    // value (pos 1, head 1, dim 2) -> values[(1·C + 1)·3 + 2]
    expect(p.values[(1 * 5 + 1) * 3 + 2]).toBe(150 + 6 + 5)
    expect([...cache.row(1, 1).keys]).toEqual([...rows(106, 1, 6)])
    expect([...cache.row(0, 0).values]).toEqual([...rows(50, 1, 6)])
    cache.truncate(1)
    expect(cache.length).toBe(1)
    expect(() => cache.truncate(2)).toThrow(/holds 1/)
    expect(() => cache.truncate(-1)).toThrow(RangeError)
  })

  it('grows geometrically, keeping the cached rows, and only when needed', () => {
    const maxLen = 4096
    const cache = new KvCache({ nLayers: 1, nKvHeads: 2, headDim: 4, maxLen })
    expect(cache.capacity).toBe(MIN_KV_CAPACITY)
    const n = MIN_KV_CAPACITY
    cache.write(0, rows(0, n, 8), rows(1e6, n, 8), n)
    cache.commit(n)
    const before = cache.past(0).keys
    cache.reserve(n) // fits: no reallocation
    expect(cache.past(0).keys).toBe(before)
    cache.reserve(n + 1)
    expect(cache.capacity).toBeGreaterThanOrEqual(n + 1)
    expect(cache.capacity).toBeLessThanOrEqual(n + KV_CAPACITY_STEP + n / 8)
    expect(cache.capacity % KV_CAPACITY_STEP).toBe(0)
    for (const pos of [0, n >> 1, n - 1]) {
      expect([...cache.row(0, pos).keys]).toEqual([...rows(pos * 8, 1, 8)])
      expect([...cache.row(0, pos).values]).toEqual([...rows(1e6 + pos * 8, 1, 8)])
    }
    cache.reserve(3000) // a long prompt: straight to what it needs
    expect(cache.capacity).toBeGreaterThanOrEqual(3000)
    expect(cache.capacity).toBeLessThanOrEqual(maxLen)
    expect([...cache.row(0, n - 2).keys]).toEqual([...rows((n - 2) * 8, 1, 8)])
    cache.reserve(maxLen)
    expect(cache.capacity).toBe(maxLen)
  })

  it('refuses to overflow and rejects wrongly sized rows', () => {
    const cache = new KvCache({ nLayers: 1, nKvHeads: 1, headDim: 2, maxLen: 2 })
    expect(() => cache.write(0, new Float32Array(6), new Float32Array(6), 3)).toThrow(/full/)
    expect(() => cache.write(0, new Float32Array(3), new Float32Array(4), 2)).toThrow(/expected 4/)
    expect(() => cache.commit(3)).toThrow(RangeError)
    expect(() => cache.reserve(3)).toThrow(/full/)
    expect(() => new KvCache({ nLayers: 0, nKvHeads: 1, headDim: 2, maxLen: 2 })).toThrow(/nLayers/)
  })
})
