import { describe, expect, it } from 'vitest'
import type { PhaseStep } from '../../main/engine/runtime/hetero/device-setup'
import { runSchedule } from '../../main/engine/runtime/hetero/scheduler'
import { TaskGraph, type ScheduledTask } from '../../main/engine/runtime/hetero/task-graph'
import { shareSlots } from '../../main/engine/runtime/hetero/slot-sharing'
import { buildForwardDag, HOST_DEVICE } from '../../main/engine/runtime/hetero/forward-dag'
import { Rng } from '../fixtures/rng'

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Runs `graph` on a virtual clock: task i takes ms(i) virtual ms. Whenever the scheduler has started all it
 * will (one macrotask turn drains its promise reactions), the driver finishes the running task that ends
 * first (ties: the one started first) and moves the clock to its end. Spans are [start, end] in virtual ms,
 * so every overlap the tests check follows from the scheduler's decisions alone, not from timers or speed.
 */
async function timeline(graph: TaskGraph, ms: (i: number) => number, maxChunksInFlight?: number): Promise<{ spans: Array<[number, number]>; order: readonly number[] }> {
  const spans: Array<[number, number]> = graph.tasks.map(() => [-1, -1])
  const running: { i: number; endMs: number; seq: number; finish: () => void }[] = []
  let nowMs = 0
  let started = 0
  let settled = false
  const report = runSchedule(
    graph,
    (i) =>
      new Promise<void>((finish) => {
        spans[i][0] = nowMs
        running.push({ i, endMs: nowMs + ms(i), seq: started++, finish })
      }),
    { maxChunksInFlight }
  )
  report.then(
    () => (settled = true),
    () => (settled = true)
  )
  for (;;) {
    await new Promise((r) => setImmediate(r))
    if (settled || running.length === 0) break
    running.sort((a, b) => a.endMs - b.endMs || a.seq - b.seq)
    const next = running.shift()
    if (next === undefined) break
    nowMs = next.endMs
    spans[next.i][1] = nowMs
    next.finish()
  }
  return { spans, order: (await report).order }
}

/** (chunk × step) tasks of a pipeline: step s of chunk c after step s − 1 of chunk c and step s of chunk c − 1. */
function pipeline(chunks: number, devices: readonly string[], cost = 1): ScheduledTask[] {
  const tasks: ScheduledTask[] = []
  for (let c = 0; c < chunks; c++) {
    devices.forEach((device, s) => {
      const deps: number[] = []
      if (s > 0) deps.push(tasks.length - 1)
      if (c > 0) deps.push((c - 1) * devices.length + s)
      tasks.push({ device, deps, chunk: c, cost })
    })
  }
  return tasks
}

describe('scheduler', () => {
  it('starts every task after its dependencies, one task per device at a time (random DAGs)', async () => {
    const rng = new Rng(7)
    for (let trial = 0; trial < 5; trial++) {
      const devices = ['a', 'b', 'c']
      const tasks: ScheduledTask[] = []
      for (let i = 0; i < 30; i++) {
        const deps = [...new Set(Array.from({ length: Math.floor(rng.uniform() * 3) }, () => Math.floor(rng.uniform() * i)))].filter((d) => d < i)
        tasks.push({ device: devices[Math.floor(rng.uniform() * 3)], deps, chunk: Math.floor(i / 10), cost: 1 })
      }
      const graph = new TaskGraph(tasks)
      const { spans, order } = await timeline(graph, (i) => (i % 3) + 1)
      expect([...order].sort((x, y) => x - y)).toEqual(tasks.map((_, i) => i))
      tasks.forEach((t, i) => {
        for (const d of t.deps) expect(spans[i][0]).toBeGreaterThanOrEqual(spans[d][1])
      })
      for (const dev of devices) {
        const mine = tasks.flatMap((t, i) => (t.device === dev ? [spans[i]] : [])).sort((x, y) => x[0] - y[0])
        for (let k = 1; k < mine.length; k++) expect(mine[k][0]).toBeGreaterThanOrEqual(mine[k - 1][1])
      }
    }
  })

  it('runs out of order: chunk 1 starts on the first device while chunk 0 is still on the second (pipelining)', async () => {
    const graph = new TaskGraph(pipeline(3, ['a', 'b']))
    const { spans } = await timeline(graph, () => 20)
    // task 2 = (chunk 1, a) overlaps task 1 = (chunk 0, b)
    expect(spans[2][0]).toBeLessThan(spans[1][1])
    expect(spans[2][0]).toBeGreaterThanOrEqual(spans[0][1])
  })

  it('keeps at most two chunks in flight: nothing of chunk c starts before chunk c − 2 has finished', async () => {
    // each chunk: one slow task on 'slow' and one quick independent task on 'fast'
    const tasks: ScheduledTask[] = []
    for (let c = 0; c < 5; c++) {
      tasks.push({ device: 'slow', deps: [], chunk: c, cost: 1 })
      tasks.push({ device: 'fast', deps: [], chunk: c, cost: 1 })
    }
    const graph = new TaskGraph(tasks)
    const { spans } = await timeline(graph, (i) => (tasks[i].device === 'slow' ? 50 : 1))
    for (let c = 2; c < 5; c++) {
      const chunkStart = Math.min(spans[2 * c][0], spans[2 * c + 1][0])
      const earlierEnd = Math.max(spans[2 * (c - 2)][1], spans[2 * (c - 2) + 1][1])
      expect(chunkStart).toBeGreaterThanOrEqual(earlierEnd)
    }
    // with one chunk in flight the quick device waits for the slow one every chunk; with two it runs ahead
    const serial = await timeline(graph, (i) => (tasks[i].device === 'slow' ? 50 : 1), 1)
    expect(serial.spans[3][0]).toBeGreaterThanOrEqual(serial.spans[0][1])
    expect(spans[3][0]).toBeLessThan(spans[0][1])
  })

  it('prefers the ready task that unblocks the most-loaded device, then the earlier chunk', async () => {
    const tasks: ScheduledTask[] = [
      { device: 'x', deps: [], chunk: 0, cost: 1 }, // 0: unblocks light work
      { device: 'x', deps: [], chunk: 0, cost: 1 }, // 1: unblocks heavy work
      { device: 'light', deps: [0], chunk: 0, cost: 1 },
      { device: 'heavy', deps: [1], chunk: 0, cost: 10 },
      { device: 'heavy', deps: [], chunk: 1, cost: 10 }
    ]
    const { order } = await runSchedule(new TaskGraph(tasks), async () => undefined)
    // 'heavy' starts task 4 at once, 'x' picks task 1 (its dependent is on the most-loaded device)
    expect(order.slice(0, 2)).toEqual([1, 4])
    expect(order.indexOf(1)).toBeLessThan(order.indexOf(0))
    // equal scores: the earlier chunk wins even when listed later
    const tie: ScheduledTask[] = [
      { device: 'x', deps: [], chunk: 1, cost: 1 },
      { device: 'x', deps: [], chunk: 0, cost: 1 }
    ]
    expect((await runSchedule(new TaskGraph(tie), async () => undefined)).order).toEqual([1, 0])
  })

  it("in order: one chunk at a time, each device's ready tasks in DAG order (llm.npu's baseline)", async () => {
    const tasks: ScheduledTask[] = [
      { device: 'x', deps: [], chunk: 0, cost: 1 },
      { device: 'x', deps: [], chunk: 0, cost: 1 },
      { device: 'light', deps: [0], chunk: 0, cost: 1 },
      { device: 'heavy', deps: [1], chunk: 0, cost: 10 },
      { device: 'heavy', deps: [], chunk: 1, cost: 10 }
    ]
    const { order } = await runSchedule(new TaskGraph(tasks), async () => undefined, { order: 'in-order' })
    // no priority rule, and chunk 1 waits until every task of chunk 0 has finished
    expect(order).toEqual([0, 1, 2, 3, 4])
    const report = await runSchedule(new TaskGraph(tasks), async () => undefined, { order: 'in-order', maxChunksInFlight: 2 })
    expect(report.order.indexOf(4)).toBe(4)
  })

  it('accounts busy time per device: the reported ms when given, the wall time otherwise', async () => {
    const tasks: ScheduledTask[] = [
      { device: 'gpu', deps: [], chunk: 0, cost: 1 },
      { device: 'gpu', deps: [0], chunk: 0, cost: 1 },
      { device: 'cpu', deps: [], chunk: 0, cost: 1 }
    ]
    // the cpu task reports nothing: its busy time is the wall time the scheduler measured around it, so it
    // must cover the task's own measured span and fit inside the whole run's
    let inner = 0
    const outerStart = performance.now()
    const report = await runSchedule(new TaskGraph(tasks), async (i, t) => {
      if (t.device === 'gpu') return 2.5 + i
      const t0 = performance.now()
      await sleep(10)
      inner = performance.now() - t0
    })
    const outer = performance.now() - outerStart
    expect(report.devices.get('gpu')).toEqual({ busyMs: 6, runs: 2 })
    expect(report.devices.get('cpu')?.runs).toBe(1)
    expect(report.devices.get('cpu')?.busyMs).toBeGreaterThanOrEqual(inner)
    expect(report.devices.get('cpu')?.busyMs).toBeLessThanOrEqual(outer)
    expect(inner).toBeGreaterThan(0)
  })

  it('rejects with the first error and starts nothing after it', async () => {
    const graph = new TaskGraph(pipeline(3, ['a', 'b']))
    const started: number[] = []
    await expect(
      runSchedule(graph, async (i) => {
        started.push(i)
        if (i === 1) throw new Error('device b failed running chunk 0')
        await sleep(5)
      })
    ).rejects.toThrow('device b failed running chunk 0')
    // tasks after 1 on 'b' (3, 5) never start
    expect(started).not.toContain(3)
    expect(started).not.toContain(5)
  })

  it('refuses malformed DAGs and reports a stall instead of hanging', async () => {
    expect(() => new TaskGraph([{ device: 'a', deps: [0], chunk: 0, cost: 1 }])).toThrow(/earlier task/)
    expect(() => new TaskGraph([{ device: 'a', deps: [], chunk: -1, cost: 1 }])).toThrow(/chunk/)
    // a chunk-0 task that waits for a chunk-2 task can never run with two chunks in flight
    const stuck = new TaskGraph([
      { device: 'a', deps: [], chunk: 2, cost: 1 },
      { device: 'b', deps: [0], chunk: 0, cost: 1 }
    ])
    await expect(runSchedule(stuck, async () => undefined)).rejects.toThrow(/stalled/)
    expect((await runSchedule(new TaskGraph([]), async () => undefined)).order).toEqual([])
  })

  it('builds a forward DAG: producers, the previous chunk, partition halves, skipped empty sequence parts', () => {
    const step = (device: string, reads: string[], writes: string[], extra: Partial<PhaseStep> = {}): PhaseStep => ({
      device,
      program: 0,
      label: `${device} ${writes.join(',')}`,
      reads,
      writes,
      costPerToken: 1,
      partition: null,
      tokens: null,
      ...extra
    })
    const steps = [
      step('cpu', ['hidden'], ['x']),
      step('cpu', ['x'], ['y'], { partition: 0, tokens: { start: 0, count: 3 } }),
      step('gpu', ['x'], ['y'], { partition: 0, tokens: { start: 3, count: null } }),
      step('gpu', ['y'], ['logits'])
    ]
    const g = buildForwardDag(steps, [5, 2])
    const t = g.tasks
    // chunk 0: embed, x, y(a), y(b), logits; chunk 1 (2 tokens): embed, x, y(a), logits — part b has no tokens
    expect(t.map((x) => `${x.chunk}:${x.device}`)).toEqual(['0:@host', '0:cpu', '0:cpu', '0:gpu', '0:gpu', '1:@host', '1:cpu', '1:cpu', '1:gpu'])
    expect(t[0].device).toBe(HOST_DEVICE)
    expect(t[4].deps).toEqual([2, 3])
    expect(t[6].deps).toEqual([1, 5])
    expect(t[8].deps).toEqual([4, 7])
    expect(t.map((x) => x.offset)).toEqual([0, 0, 0, 0, 0, 5, 5, 5, 5])
    expect(t.map((x) => x.parity)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1])
    expect(() => buildForwardDag([step('cpu', ['nowhere'], ['x'])], [1])).toThrow(/reads nowhere before/)
  })

  it('shares an arena slot only between values that are never live at once', () => {
    const step = (reads: string[], writes: string[], extra: Partial<PhaseStep> = {}): PhaseStep => ({
      device: 'cpu',
      program: 0,
      label: writes.join(','),
      reads,
      writes,
      costPerToken: 1,
      partition: null,
      tokens: null,
      ...extra
    })
    const shape = (name: string): { name: string; width: number; rows: number } => ({ name, width: 4, rows: 2 })
    const groups = (slots: ReturnType<typeof shareSlots>): string[][] => slots.map((s) => [s.name, ...(s.aliases ?? [])])
    // a chain: a task's input and output never share; hidden is dead once y is written; logits stay pinned
    const chain = [step(['hidden'], ['x']), step(['x'], ['y']), step(['y'], ['logits'])]
    expect(groups(shareSlots([chain], ['hidden', 'x', 'y', 'logits'].map(shape), new Set(['logits'])))).toEqual([['hidden', 'y'], ['x'], ['logits']])
    // the only path from v's last use to z's writer runs through a sequence part that a short chunk skips
    const risky = [
      step(['hidden'], ['v']),
      step(['hidden'], ['w'], { partition: 0, tokens: { start: 0, count: 1 } }),
      step(['v'], ['w'], { partition: 0, tokens: { start: 1, count: null } }),
      step(['w'], ['z'])
    ]
    expect(groups(shareSlots([risky], ['hidden', 'v', 'w', 'z'].map(shape), new Set()))).toEqual([['hidden'], ['v'], ['w'], ['z']])
    // a value pair disjoint in one phase but overlapping in the other keeps separate slots
    const other = [step(['hidden'], ['y']), step(['y'], ['x']), step(['hidden', 'x'], ['logits'])]
    expect(groups(shareSlots([chain, other], ['hidden', 'x', 'y', 'logits'].map(shape), new Set(['logits'])))).toEqual([['hidden'], ['x'], ['y'], ['logits']])
  })
})
