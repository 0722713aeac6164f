import { describe, expect, it } from 'vitest'
import { measureHandoff } from '../../bench/handoff'
import { GraphBuilder } from '../../main/engine/graph'
import { DeviceHost } from '../../main/engine/runtime/hetero/device-host'
import { ProtocolError, WorkerExitedError } from '../../main/engine/runtime/errors'
import { epochNowMs, UsageBoard } from '../../main/engine/runtime/usage'
import { ValueArena, type SlotShape } from '../../main/engine/runtime/hetero/value-arena'

/** y = Identity(x) over [1, S, width]: the device worker copies x out of the arena and y back in. */
function identityGraph(input: string, output: string, width: number): Uint8Array {
  const b = new GraphBuilder('test')
  b.input(input, 'float32', [1, 'seq', width])
  b.node('Identity', [input], { name: 'copy', outputs: [output] })
  b.output(output, 'float32', [1, 'seq', width])
  return b.toBytes('test')
}

function startHost(slots: readonly SlotShape[], board = new UsageBoard()): { host: DeviceHost; arena: ValueArena; board: UsageBoard } {
  const arena = ValueArena.create(slots)
  const host = DeviceHost.start({ deviceId: 'cpu', ep: 'cpu', threads: 1, arena: arena.init, usage: board.buffer, usageSlot: 3, kv: { nKvHeads: 1, headDim: 2, maxLen: 8 } })
  return { host, arena, board }
}

/** Bit-exact equality (NaN payloads, −0 and subnormals included). */
function sameBits(a: Float32Array, b: Float32Array): boolean {
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length)
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length)
  return x.length === y.length && x.every((v, i) => v === y[i])
}

describe('value arena and control-block hand-off with a real device worker', () => {
  it('round-trips slot values bit-exactly through a worker graph, at token offsets and feature ranges', async () => {
    // a: [4 rows, 3], wide: [4 rows, 8] (a part writes features [5, 8)), tail: [4 rows, 3]
    const { host, arena, board } = startHost([
      { name: 'a', width: 3, rows: 4 },
      { name: 'wide', width: 8, rows: 4 },
      { name: 'tail', width: 3, rows: 4 }
    ])
    try {
      await host.loadSession('id', 'identity', identityGraph('a', 'b', 3))
      // whole run: b -> wide features [5, 8); sequence part: tokens [1, 3) of b -> tail at those rows
      await host.addProgram(0, { kind: 'graph', label: 'a to wide[5:8]', session: 'id', tokenStart: 0, tokenCount: null, outputs: { b: { value: 'wide', start: 5 } }, kv: [], local: [] })
      await host.addProgram(1, { kind: 'graph', label: 'a rows 1..2 to tail', session: 'id', tokenStart: 1, tokenCount: 2, outputs: { b: { value: 'tail', start: 0 } }, kv: [], local: [] })
      const values = Float32Array.of(1.5, -0, 1e-45, NaN, Infinity, -3.25e38, 7, 8, 9, 10, 11, 12)
      arena.view(arena.slotIndex('a'), 1).set(values)
      arena.view(arena.slotIndex('wide'), 1).fill(-1)
      await host.run(0, 1, 4, 0)
      await host.run(1, 1, 4, 0)
      const wide = arena.view(arena.slotIndex('wide'), 1)
      for (let r = 0; r < 4; r++) {
        expect(sameBits(wide.subarray(r * 8 + 5, r * 8 + 8), values.subarray(r * 3, r * 3 + 3))).toBe(true)
        expect([...wide.subarray(r * 8, r * 8 + 5)]).toEqual([-1, -1, -1, -1, -1])
      }
      const tail = arena.view(arena.slotIndex('tail'), 1)
      expect(sameBits(tail.subarray(3, 9), values.subarray(3, 9))).toBe(true)
      expect([...tail.subarray(0, 3), ...tail.subarray(9)]).toEqual([0, 0, 0, 0, 0, 0])
      // parity 0 was never touched
      expect(arena.view(arena.slotIndex('wide'), 0).every((v) => v === 0)).toBe(true)
      // busy time went to this device's slot of the shared board
      expect(board.read(['x', 'y', 'z', 'cpu']).devices[3].runs).toBe(2)
      expect(board.busyMs(3)).toBeGreaterThan(0)
    } finally {
      await host.dispose()
    }
  })

  it('a sum join adds a partial slot into its target in the worker', async () => {
    const { host, arena } = startHost([
      { name: 'resid_0', width: 2, rows: 3 },
      { name: 'resid_0~partial', width: 2, rows: 3 }
    ])
    try {
      await host.addProgram(7, { kind: 'sum', label: 'join', target: 'resid_0', partial: 'resid_0~partial' })
      arena.view(0, 0).set([1, 2, 3, 4, 5, 6])
      arena.view(1, 0).set([10, 20, 30, 40, 50, 60])
      await host.run(7, 0, 2, 0)
      expect([...arena.view(0, 0)]).toEqual([11, 22, 33, 44, 5, 6])
    } finally {
      await host.dispose()
    }
  })

  it('errors propagate with the device named, the worker keeps serving, and a gone worker rejects every call', async () => {
    const { host } = startHost([{ name: 'a', width: 3, rows: 4 }])
    await expect(host.run(42, 0, 1, 0)).rejects.toThrow(/device cpu: no program 42/)
    await expect(host.addProgram(1, { kind: 'sum', label: 'bad join', target: 'a', partial: 'missing' })).rejects.toThrow(/missing has no arena slot/)
    await expect(host.loadSession('broken', 'layer 0 qkv', Uint8Array.of(1, 2, 3))).rejects.toThrow(/device cpu \(cpu\) cannot open the graph for layer 0 qkv/)
    await expect(host.run(0, 0, 1, 0)).rejects.toThrow(/no program 0/)
    await host.ping()
    await host.dispose()
    await expect(host.ping()).rejects.toBeInstanceOf(WorkerExitedError)
  })

  it('the usage board counts a running task live, then its measured time', async () => {
    const board = new UsageBoard()
    // Bracket the start and the reading with the board's own clock: the live count must lie between the
    // inner and the outer interval, whatever the machine's speed and however long the sleep really took.
    const beforeStart = epochNowMs()
    board.start(1)
    const afterStart = epochNowMs()
    await new Promise((r) => setTimeout(r, 20))
    const beforeRead = epochNowMs()
    const during = board.read(['cpu', 'webgpu-0']).devices[1]
    const afterRead = epochNowMs()
    expect(during.busyMs).toBeGreaterThanOrEqual(beforeRead - afterStart)
    expect(during.busyMs).toBeLessThanOrEqual(afterRead - beforeStart)
    expect(during.busyMs).toBeGreaterThan(0)
    expect(during.runs).toBe(0)
    board.add(1, 7.5)
    expect(board.read(['cpu', 'webgpu-0']).devices).toEqual([
      { id: 'cpu', busyMs: 0, runs: 0 },
      { id: 'webgpu-0', busyMs: 7.5, runs: 1 }
    ])
    expect(() => board.add(16, 1)).toThrow(RangeError)
  })

  it('rejects malformed arena init data', () => {
    const good = ValueArena.create([{ name: 'a', width: 2, rows: 2 }]).init
    expect(ValueArena.attach({ ...good }).slot(0)).toEqual({ name: 'a', width: 2, rows: 2, aliases: [], offset: 0 })
    const shared = ValueArena.create([{ name: 'a', width: 2, rows: 2, aliases: ['b'] }, { name: 'c', width: 1, rows: 1 }])
    expect([shared.slotIndex('a'), shared.slotIndex('b'), shared.slotIndex('c')]).toEqual([0, 0, 1])
    expect(() => ValueArena.attach({ ...shared.init, slots: shared.init.slots.map((s) => ({ ...s, aliases: ['c'] })) })).toThrow(ProtocolError)
    expect(() => ValueArena.attach({ ...good, buffer: new ArrayBuffer(64) })).toThrow(ProtocolError)
    expect(() => ValueArena.attach({ ...good, slots: [{ name: 'a', width: 2, rows: 2, offset: 1e6 }] })).toThrow(ProtocolError)
    expect(() => ValueArena.attach({ ...good, slots: [{ name: 'a', width: -1, rows: 2, offset: 0 }] })).toThrow(ProtocolError)
    expect(() => ValueArena.create([{ name: 'a', width: 2, rows: 2 }, { name: 'a', width: 2, rows: 2 }])).toThrow(/twice/)
  })

  it('measures µs per hop: Atomics control block vs a postMessage round trip', async () => {
    const m = await measureHandoff({ hops: 300, reps: 3 })
    console.log(`hand-off: ${m.sabAtomicsUsPerHop.toFixed(1)} µs/hop via SharedArrayBuffer + Atomics, ${m.postMessageUsPerHop.toFixed(1)} µs/hop via postMessage (median of ${m.reps} × ${m.hops})`)
    expect(m.sabAtomicsUsPerHop).toBeGreaterThan(0)
    expect(m.postMessageUsPerHop).toBeGreaterThan(0)
    expect(Number.isFinite(m.sabAtomicsUsPerHop + m.postMessageUsPerHop)).toBe(true)
  })
})
