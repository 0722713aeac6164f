/** @file What a first model open is doing, for the commands that open a model. */
import type { LoadProgress } from '../engine'

/** What a first open is doing, one line per stage on stderr (a cached open, which only prepares, says nothing). */
export function firstOpenReporter(log: (line: string) => void): (p: LoadProgress) => void {
  const said = new Set<string>()
  const lines: Readonly<Record<LoadProgress['stage'], string>> = {
    compiling: 'compiling the model for this machine (once; later runs reuse it)…',
    reading: 'hashing the model file for the cache…',
    preparing: 'loading the compiled model…'
  }
  return (p) => {
    if (said.has(p.stage) || (p.stage === 'preparing' && !said.has('compiling'))) return
    said.add(p.stage)
    log(lines[p.stage])
  }
}
