/**
 * @file Which arena values may share one slot. A slot per value name would cost, with layers split over
 * two devices and a prefill chunk of 256, ~10 activations × layers × chunk × width × 2 parities (0.5 GB
 * for a 1.5B-parameter shape); but within a chunk most values are dead long before the next one of the
 * same shape is written. Two values may share a slot when, in every phase that has both, every task
 * touching one of them is guaranteed to finish before any task writing the other starts — guaranteed
 * means a path of dependencies (chunkDependencies, the rule the task DAG uses) through tasks that always
 * run (a sequence part may be skipped by a short chunk, so it never counts as an intermediate). Across
 * chunks nothing changes: chunk c + 1 uses the other parity and chunk c + 2 waits for all of chunk c.
 */
import type { PhaseStep } from './device-setup'
import { chunkDependencies, EMBED_STEP } from './forward-dag'
import type { SlotShape } from './value-arena'

/** One phase's happens-before relation and who touches each value. */
interface PhaseOrder {
  /** reach[i]: bitset of nodes that always start after node i finished (node 0 = embedding, s + 1 = step s) */
  readonly reach: readonly Uint32Array[]
  readonly uses: ReadonlyMap<string, readonly number[]>
  readonly writers: ReadonlyMap<string, readonly number[]>
}

function phaseOrder(steps: readonly PhaseStep[]): PhaseOrder {
  const n = steps.length + 1
  const words = Math.ceil(n / 32)
  const deps = chunkDependencies(steps, () => true)
  const successors: number[][] = Array.from({ length: n }, () => [])
  deps.forEach((d, s) => {
    for (const from of d ?? []) successors[from === EMBED_STEP ? 0 : from + 1].push(s + 1)
  })
  const optional = [false, ...steps.map((s) => s.tokens !== null)]
  const reach: Uint32Array[] = Array.from({ length: n }, () => new Uint32Array(words))
  // steps are in dependency order, so successors have larger indices: fill from the end
  for (let i = n - 1; i >= 0; i--) {
    for (const j of successors[i]) {
      reach[i][j >>> 5] |= 1 << (j & 31)
      if (!optional[j]) for (let w = 0; w < words; w++) reach[i][w] |= reach[j][w]
    }
  }
  const uses = new Map<string, number[]>([['hidden', [0]]])
  const writers = new Map<string, number[]>([['hidden', [0]]])
  const add = (m: Map<string, number[]>, v: string, node: number): void => {
    const list = m.get(v)
    if (list === undefined) m.set(v, [node])
    else if (!list.includes(node)) list.push(node)
  }
  steps.forEach((step, s) => {
    for (const v of step.reads) add(uses, v, s + 1)
    for (const v of step.writes) {
      add(uses, v, s + 1)
      add(writers, v, s + 1)
    }
  })
  return { reach, uses, writers }
}

/** True when in `order` every task touching `a` always finishes before any task writing `b` starts. */
function before(order: PhaseOrder, a: string, b: string): boolean {
  const uses = order.uses.get(a) ?? []
  const writers = order.writers.get(b) ?? []
  return uses.every((u) => writers.every((w) => (order.reach[u][w >>> 5] & (1 << (w & 31))) !== 0))
}

/** True when `a` and `b` never hold live data at once in any phase. */
function disjoint(orders: readonly PhaseOrder[], a: string, b: string): boolean {
  return orders.every((o) => !o.uses.has(a) || !o.uses.has(b) || before(o, a, b) || before(o, b, a))
}

/**
 * Groups `shapes` (one per value) into shared slots for the given phases' steps: each returned shape is
 * one slot, named after its first value, with the others as aliases. `pinned` values (read outside the
 * DAG, like the logits) keep a slot of their own.
 */
export function shareSlots(phases: readonly (readonly PhaseStep[])[], shapes: readonly SlotShape[], pinned: ReadonlySet<string>): SlotShape[] {
  const orders = phases.map(phaseOrder)
  // first touch in phase order, so values tend to reuse the slot of the most recently dead one
  const rank = new Map<string, number>()
  let next = 0
  for (const o of orders) for (const v of o.uses.keys()) if (!rank.has(v)) rank.set(v, next++)
  const sorted = [...shapes].sort((x, y) => (rank.get(x.name) ?? Infinity) - (rank.get(y.name) ?? Infinity))
  const slots: Array<{ shape: SlotShape; members: string[] }> = []
  for (const s of sorted) {
    const home = pinned.has(s.name)
      ? undefined
      : slots.find((slot) => slot.shape.width === s.width && slot.shape.rows === s.rows && !slot.members.some((m) => pinned.has(m)) && slot.members.every((m) => disjoint(orders, m, s.name)))
    if (home === undefined) slots.push({ shape: s, members: [s.name] })
    else home.members.push(s.name)
  }
  return slots.map(({ shape, members }) => ({ name: members[0], width: shape.width, rows: shape.rows, aliases: members.slice(1) }))
}
