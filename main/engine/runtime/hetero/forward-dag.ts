/**
 * @file One forward's task DAG: for each chunk, an embedding task on the coordinator ('@host'), then one
 * task per step of the phase (graph runs, partition parts, joins, KV appends). A task depends on the tasks
 * of its chunk that produced the arena values it reads (both parts of a partition for a value they write
 * in halves), and on the same step in the previous chunk (KV order: attention of chunk c + 1 reads the
 * rows chunk c appended). A sequence part left without tokens by a short chunk is not a task at all. The
 * graph depends only on the chunk lengths, so decode reuses one graph for every step.
 */
import type { PhaseStep } from './device-setup'
import { TaskGraph, type ScheduledTask } from './task-graph'
import { parityOf, type Parity } from './value-arena'

/** The pseudo-device of the tasks the coordinator runs itself (embedding lookups). */
export const HOST_DEVICE = '@host'

/** A task of one forward. */
export interface ForwardTask extends ScheduledTask {
  /** the program to run, or -1 for the embedding task */
  readonly program: number
  readonly label: string
  /** tokens in the task's chunk */
  readonly tokens: number
  /** position of the chunk's first token, relative to the forward's first */
  readonly offset: number
  readonly parity: Parity
}

/** Cost of an embedding lookup per token, in the steps' unit (op groups). */
const EMBED_COST_PER_TOKEN = 0.01

/** Index of the embedding task in `chunkDependencies`' numbering (step s is s). */
export const EMBED_STEP = -1

/** True when step `step` runs in a chunk of `tokens` tokens (a sequence part may get none). */
export function stepRuns(step: PhaseStep, tokens: number): boolean {
  if (step.tokens === null) return true
  const start = Math.min(tokens, step.tokens.start)
  const count = step.tokens.count === null ? tokens - start : Math.min(step.tokens.count, tokens - start)
  return count > 0
}

/**
 * The dependencies of each step within one chunk (step indices, EMBED_STEP for the embedding task) when
 * the steps for which `runs` is true run: the latest producers of the values it reads, both parts of a
 * partition for a value they write in halves. The one rule the task DAG and the arena's slot sharing use.
 */
export function chunkDependencies(steps: readonly PhaseStep[], runs: (s: number) => boolean): (number[] | null)[] {
  const producers = new Map<string, { steps: number[]; partition: number | null }>([['hidden', { steps: [EMBED_STEP], partition: null }]])
  return steps.map((step, s) => {
    if (!runs(s)) return null
    const deps = new Set<number>()
    for (const r of step.reads) {
      const p = producers.get(r)
      if (p === undefined) throw new Error(`${step.label} reads ${r} before any step produces it`)
      for (const d of p.steps) deps.add(d)
    }
    for (const w of step.writes) {
      const p = producers.get(w)
      if (p !== undefined && step.partition !== null && p.partition === step.partition) p.steps.push(s)
      else producers.set(w, { steps: [s], partition: step.partition })
    }
    return [...deps].sort((a, b) => a - b)
  })
}

/** The DAG of running `steps` over chunks of `chunkLengths` tokens. */
export function buildForwardDag(steps: readonly PhaseStep[], chunkLengths: readonly number[]): TaskGraph<ForwardTask> {
  const tasks: ForwardTask[] = []
  const last = new Map<number, number>()
  let lastEmbed = -1
  let offset = 0
  chunkLengths.forEach((tokens, chunk) => {
    if (!Number.isInteger(tokens) || tokens < 1) throw new RangeError(`chunk ${chunk} has ${tokens} tokens`)
    const parity = parityOf(chunk)
    const embed = tasks.length
    tasks.push({ device: HOST_DEVICE, deps: lastEmbed < 0 ? [] : [lastEmbed], chunk, cost: EMBED_COST_PER_TOKEN * tokens, program: -1, label: `chunk ${chunk} embeddings`, tokens, offset, parity })
    lastEmbed = embed
    // task index of each step in this chunk
    const taskOf = new Map<number, number>([[EMBED_STEP, embed]])
    chunkDependencies(steps, (s) => stepRuns(steps[s], tokens)).forEach((stepDeps, s) => {
      if (stepDeps === null) return
      const step = steps[s]
      const deps = new Set<number>()
      for (const d of stepDeps) {
        const t = taskOf.get(d)
        if (t === undefined) throw new Error(`unreachable: ${step.label} depends on a step that has not run`)
        deps.add(t)
      }
      const previous = last.get(s)
      if (previous !== undefined) deps.add(previous)
      const index = tasks.length
      tasks.push({ device: step.device, deps: [...deps].sort((a, b) => a - b), chunk, cost: step.costPerToken * tokens, program: step.program, label: step.label, tokens, offset, parity })
      last.set(s, index)
      taskOf.set(s, index)
    })
    offset += tokens
  })
  return new TaskGraph(tasks)
}
