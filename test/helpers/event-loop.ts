/** @file Counting turns of the event loop while something runs: how tests show that work left the main thread, without timing it. */
import { stat } from 'node:fs'

/** Resolves from a poll-phase callback (fs I/O): a setImmediate queued next runs before any later I/O or worker message. */
const pollPhase = (): Promise<void> => new Promise((resolve) => stat('.', () => resolve()))

/**
 * Starts `work` and counts the event loop's turns until it settles; work done synchronously on this thread
 * (the old search path) settles before the first turn, so it counts 0.
 */
export async function turnsWhile<T>(work: () => Promise<T>): Promise<{ readonly turns: number; readonly result: T }> {
  await pollPhase()
  let turns = 0
  let running = true
  const tick = (): void => {
    turns++
    if (running) setImmediate(tick)
  }
  setImmediate(tick)
  try {
    const result = await work()
    return { turns, result }
  } finally {
    running = false
  }
}
