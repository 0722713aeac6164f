/** @file The one interface every benchmark peer implements inside its child process. */

/** An engine holding one model and one sequence's KV cache. */
export interface BenchPeer {
  /** what the peer reports about its set-up (threads, backend, compile cache...), printable values */
  readonly details: Readonly<Record<string, string | number | boolean>>
  /** Drops cached positions ≥ pos. Untimed set-up before each timed call. */
  reset(pos: number): Promise<void>
  /** Runs `tokens` at positions pos.. (pos = cached length) and returns the greedy next token. */
  evaluate(tokens: readonly number[], pos: number): Promise<number>
  /** Feeds `first` at `pos`, then each greedy token in turn: `steps` single-token forwards; returns the greedy tokens. */
  decode(first: number, pos: number, steps: number): Promise<number[]>
  dispose(): Promise<void>
}
