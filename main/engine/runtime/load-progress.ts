/**
 * @file What opening a model is doing, for a progress bar: the first open of a large model takes a while
 * (compiling its graph, hashing its bytes, ONNX Runtime preparing its weights) and a user deserves to see it
 * move. `done`/`total` count the stage's units (graph groups, bytes); total 0 means no measure (a spinner).
 */
import type { FieldReader } from '../../common/reader'

/** The stages, in the order a first open goes through them (a cached open only prepares). */
export const LOAD_STAGES = ['compiling', 'reading', 'preparing'] as const

export type LoadStage = (typeof LOAD_STAGES)[number]

export interface LoadProgress {
  /** 'compiling': emitting the graph (units: op groups); 'reading': hashing the model's bytes (units: bytes); 'preparing': ONNX Runtime loading the graph (no units) */
  readonly stage: LoadStage
  readonly done: number
  readonly total: number
}

/** Receives progress while a model opens. */
export type LoadProgressListener = (p: LoadProgress) => void

/** Reads a LoadProgress that crossed a boundary (worker message, HTTP event). */
export function readLoadProgress(r: FieldReader): LoadProgress {
  const total = r.number('total', 0, Number.MAX_SAFE_INTEGER)
  return { stage: r.choice('stage', LOAD_STAGES), done: r.number('done', 0, total), total }
}
