/**
 * @file A task DAG ready to schedule: each task's device, dependencies (earlier tasks only), chunk and cost,
 * validated once, with its reverse edges and per-device numbering made once so the scheduler can run the
 * same graph for every decode step without rebuilding it.
 */

/** One node of the DAG. */
export interface ScheduledTask {
  readonly device: string
  /** indices of tasks that must finish first; each is smaller than this task's own index */
  readonly deps: readonly number[]
  /** the prefill chunk the task belongs to (0 for decode) */
  readonly chunk: number
  /** estimated cost in any consistent unit (e.g. tokens × op groups), for the priority rule */
  readonly cost: number
}

/** Most tasks in one DAG. */
export const MAX_SCHEDULED_TASKS = 1 << 20

/** A validated DAG with its reverse edges and per-device task lists, reusable across runs. */
export class TaskGraph<T extends ScheduledTask = ScheduledTask> {
  /** dependents[i]: tasks that list i as a dependency */
  readonly dependents: readonly number[][]
  readonly deviceIds: readonly string[]
  /** device index of each task */
  readonly deviceOf: Int32Array
  readonly chunkCount: number

  constructor(readonly tasks: readonly T[]) {
    if (tasks.length > MAX_SCHEDULED_TASKS) throw new RangeError(`${tasks.length} tasks exceed ${MAX_SCHEDULED_TASKS}`)
    const dependents: number[][] = tasks.map(() => [])
    const ids: string[] = []
    this.deviceOf = new Int32Array(tasks.length)
    let chunks = 0
    tasks.forEach((t, i) => {
      if (!Number.isInteger(t.chunk) || t.chunk < 0) throw new RangeError(`task ${i}: chunk must be a non-negative integer, got ${t.chunk}`)
      if (!Number.isFinite(t.cost) || t.cost < 0) throw new RangeError(`task ${i}: cost must be finite and ≥ 0, got ${t.cost}`)
      for (const d of t.deps) {
        if (!Number.isInteger(d) || d < 0 || d >= i) throw new RangeError(`task ${i}: dependency ${d} must be an earlier task`)
        dependents[d].push(i)
      }
      let di = ids.indexOf(t.device)
      if (di < 0) di = ids.push(t.device) - 1
      this.deviceOf[i] = di
      chunks = Math.max(chunks, t.chunk + 1)
    })
    this.dependents = dependents
    this.deviceIds = ids
    this.chunkCount = chunks
  }
}
