/**
 * @file The out-of-order executor of one forward's task DAG (chunk × segment tasks, partition parts,
 * joins, KV appends), pure logic over an `execute(task)` callback so it is testable without ORT.
 *
 * Rules:
 * - a task starts once all its dependencies have finished and its device is idle (one task per device
 *   at a time: a device worker runs one command at a time);
 * - at most `maxChunksInFlight` chunks are open: a task of chunk c waits until every task of chunk
 *   c − maxChunksInFlight has finished (the value arena is double-buffered by chunk parity);
 * - when a device has several ready tasks, it starts the one that unblocks work for the most-loaded
 *   device (llm.npu §3.4): the score of a task is the largest remaining load (summed cost of tasks not yet
 *   started) among the devices of the tasks that depend on it; ties go to the earlier chunk, then to the
 *   earlier task.
 * Each device's busy time is the sum of what `execute` reports per task (the worker's measured ms), or
 * the task's wall time when it reports nothing.
 *
 * `order: 'in-order'` is the baseline llm.npu compares with: one chunk at a time, each device taking its ready
 * tasks in DAG order — a device waits for the others at every hand-off (the NPU's bubbles).
 */
import type { ScheduledTask, TaskGraph } from './task-graph'

/** Busy time and task count of one device in one schedule. */
export interface DeviceRecord {
  busyMs: number
  runs: number
}

/** What a finished schedule did. */
export interface ScheduleReport {
  /** per device, in first-appearance order */
  readonly devices: ReadonlyMap<string, DeviceRecord>
  /** task indices in the order they were started */
  readonly order: readonly number[]
  readonly wallMs: number
}

/** How runSchedule picks among ready tasks: llm.npu's rule across chunks, or one chunk at a time in DAG order. */
export type ScheduleOrder = 'out-of-order' | 'in-order'

/** Both orders, the default first. */
export const SCHEDULE_ORDERS: readonly ScheduleOrder[] = ['out-of-order', 'in-order']

/** Options for runSchedule. */
export interface ScheduleOptions {
  /** chunks that may have tasks running or ready at once (default 2, the arena's double buffering; 1 when in order) */
  readonly maxChunksInFlight?: number
  /** default 'out-of-order' */
  readonly order?: ScheduleOrder
}

/**
 * Runs every task of `graph` through `execute` (resolving to the task's busy ms, or nothing to use its wall
 * time). Rejects with the first error after the tasks already running have settled; starts nothing new after it.
 */
export function runSchedule<T extends ScheduledTask>(
  graph: TaskGraph<T>,
  execute: (index: number, task: T) => Promise<number | void>,
  options: ScheduleOptions = {}
): Promise<ScheduleReport> {
  const inOrder = options.order === 'in-order'
  const maxInFlight = inOrder ? 1 : (options.maxChunksInFlight ?? 2)
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1) throw new RangeError(`maxChunksInFlight must be a positive integer, got ${maxInFlight}`)
  const { tasks, dependents, deviceOf, deviceIds } = graph
  const n = tasks.length
  const t0 = performance.now()
  const waiting = new Int32Array(n)
  const load = new Float64Array(deviceIds.length)
  const idle = deviceIds.map(() => true)
  const ready: number[][] = deviceIds.map(() => [])
  const openInChunk = new Int32Array(graph.chunkCount)
  const records = new Map<string, DeviceRecord>(deviceIds.map((id) => [id, { busyMs: 0, runs: 0 }]))
  const order: number[] = []
  tasks.forEach((t, i) => {
    waiting[i] = t.deps.length
    load[deviceOf[i]] += t.cost
    openInChunk[t.chunk]++
    if (t.deps.length === 0) ready[deviceOf[i]].push(i)
  })
  let lowestOpenChunk = 0
  while (lowestOpenChunk < graph.chunkCount && openInChunk[lowestOpenChunk] === 0) lowestOpenChunk++
  let finished = 0
  let running = 0
  let failure: unknown = null
  let hasFailure = false

  return new Promise<ScheduleReport>((resolve, reject) => {
    const settleIfDone = (): void => {
      if (running > 0) return
      if (hasFailure) reject(failure)
      else if (finished === n) resolve({ devices: records, order, wallMs: performance.now() - t0 })
      // only a task depending on a later chunk than the window allows can leave nothing runnable
      else reject(new Error(`schedule stalled with ${n - finished} tasks left: a task depends on a chunk ${maxInFlight} or more ahead`))
    }

    const score = (i: number): number => {
      // in order: the earliest task first (the tie-break below)
      if (inOrder) return 0
      let best = 0
      for (const d of dependents[i]) best = Math.max(best, load[deviceOf[d]])
      return best
    }

    /** The ready task device `dev` should start now, or -1. */
    const pick = (dev: number): number => {
      const list = ready[dev]
      let bestAt = -1
      let bestScore = -1
      for (let k = 0; k < list.length; k++) {
        const i = list[k]
        if (tasks[i].chunk >= lowestOpenChunk + maxInFlight) continue
        const s = score(i)
        const b = bestAt < 0 ? -1 : list[bestAt]
        if (bestAt < 0 || s > bestScore || (s === bestScore && (tasks[i].chunk < tasks[b].chunk || (tasks[i].chunk === tasks[b].chunk && i < b)))) {
          bestAt = k
          bestScore = s
        }
      }
      if (bestAt < 0) return -1
      const i = list[bestAt]
      list.splice(bestAt, 1)
      return i
    }

    const dispatch = (): void => {
      if (hasFailure) return
      for (let dev = 0; dev < deviceIds.length; dev++) {
        if (!idle[dev]) continue
        const i = pick(dev)
        if (i >= 0) start(i)
      }
    }

    const complete = (i: number, busyMs: number): void => {
      running--
      finished++
      const dev = deviceOf[i]
      idle[dev] = true
      const record = records.get(deviceIds[dev])
      if (record) {
        record.busyMs += busyMs
        record.runs++
      }
      const c = tasks[i].chunk
      openInChunk[c]--
      while (lowestOpenChunk < graph.chunkCount && openInChunk[lowestOpenChunk] === 0) lowestOpenChunk++
      for (const d of dependents[i]) if (--waiting[d] === 0) ready[deviceOf[d]].push(d)
      dispatch()
      settleIfDone()
    }

    const start = (i: number): void => {
      const dev = deviceOf[i]
      idle[dev] = false
      load[dev] -= tasks[i].cost
      running++
      order.push(i)
      const begun = performance.now()
      Promise.resolve()
        .then(() => execute(i, tasks[i]))
        .then(
          (ms) => complete(i, typeof ms === 'number' ? ms : performance.now() - begun),
          (err: unknown) => {
            if (!hasFailure) {
              hasFailure = true
              failure = err
            }
            running--
            idle[dev] = true
            settleIfDone()
          }
        )
    }

    dispatch()
    settleIfDone()
  })
}
