import { describe, expect, it } from 'vitest'
import { KvCache } from '../../main/engine/runtime/kv-cache'

describe('KvCache', () => {
  it('appends rows, exposes the valid prefix as views of its own buffers, and truncates', () => {
    const cache = new KvCache({ nLayers: 2, nKvHeads: 2, headDim: 3, maxLen: 5 })
    expect(cache.length).toBe(0)
    expect(cache.past(0).keys.length).toBe(0)
    const rows = (base: number, n: number): Float32Array => Float32Array.from({ length: n * 6 }, (_, i) => base + i)
    for (let l = 0; l < 2; l++) cache.write(l, rows(100 * l, 2), rows(100 * l + 50, 2), 2)
    cache.commit(2)
    expect(cache.length).toBe(2)
    const p = cache.past(1)
    expect(p.keys.buffer).toBe(cache.keys[1].buffer) // a view, not a copy
    expect([...p.keys]).toEqual([...rows(100, 2)])
    expect([...p.values]).toEqual([...rows(150, 2)])
    for (let l = 0; l < 2; l++) cache.write(l, rows(7, 1), rows(8, 1), 1)
    cache.commit(1)
    expect([...cache.past(0).keys.subarray(12)]).toEqual([...rows(7, 1)])
    cache.truncate(1)
    expect(cache.length).toBe(1)
    expect(cache.past(0).keys.length).toBe(6)
    expect(() => cache.truncate(2)).toThrow(/holds 1/)
    expect(() => cache.truncate(-1)).toThrow(RangeError)
  })

  it('refuses to overflow and rejects wrongly sized rows', () => {
    const cache = new KvCache({ nLayers: 1, nKvHeads: 1, headDim: 2, maxLen: 2 })
    expect(() => cache.write(0, new Float32Array(6), new Float32Array(6), 3)).toThrow(/full/)
    expect(() => cache.write(0, new Float32Array(3), new Float32Array(4), 2)).toThrow(/expected 4/)
    expect(() => cache.commit(3)).toThrow(RangeError)
    expect(() => new KvCache({ nLayers: 0, nKvHeads: 1, headDim: 2, maxLen: 2 })).toThrow(/nLayers/)
  })
})
