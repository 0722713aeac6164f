/**
 * @file Tandem against itself at another commit, in one run: each checkout's own benchmark peer child (the
 * engine's public worker API, bench/child.ts), the same GGUF files, the same requests, alternating between
 * the two every repetition so a shared machine's drift hits both alike. Prints a table of medians, their
 * range and the ratio new/old; it is how a refactor shows it cost no speed.
 *
 *   git worktree add /tmp/base <commit> && cp -a node_modules /tmp/base/
 *   node --import tsx bench/compare-commits.ts --base /tmp/base [--models f32,q8_0,q4_0] [--threads 2] [--reps 10]
 */
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { PeerChild } from './child-handle'
import { BENCH_MODEL_IDS, ensureBenchModel } from './models'

type Side = 'old' | 'new'
/** What a checkout's bench/child-handle.ts exports that this script uses. */
type ChildHandleModule = typeof import('./child-handle')

const PROMPT_LENGTHS = [128, 512] as const
const DECODE_STEPS = 128
/** Context each peer holds: the longest prompt, the decode run and a margin. */
const CONTEXT = 1200

const { values } = parseArgs({
  options: { base: { type: 'string' }, models: { type: 'string', default: 'f32,q8_0,q4_0' }, threads: { type: 'string', default: '2' }, reps: { type: 'string', default: '10' } }
})
if (values.base === undefined) throw new Error('usage: compare-commits.ts --base <checkout of the other commit> [--models f32,q8_0] [--threads 2] [--reps 10]')
const roots: Record<Side, string> = { old: resolve(values.base), new: resolve(import.meta.dirname, '..') }
const threads = Number(values.threads)
const reps = Number(values.reps)

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

const handles: Record<Side, ChildHandleModule> = {
  old: await import(join(roots.old, 'bench', 'child-handle.ts')),
  new: await import(join(roots.new, 'bench', 'child-handle.ts'))
}
const rows = new Map<string, Record<Side, number[]>>()
const record = (row: string, side: Side, value: number): void => {
  const r = rows.get(row) ?? { old: [], new: [] }
  r[side].push(value)
  rows.set(row, r)
}

for (const id of values.models.split(',')) {
  const modelId = BENCH_MODEL_IDS.find((m) => m === id)
  if (modelId === undefined) throw new Error(`unknown model ${id}; known: ${BENCH_MODEL_IDS.join(', ')}`)
  const file = await ensureBenchModel(modelId, join(roots.new, 'bench', '.models'), (line) => console.error(line))
  const prompt = Array.from({ length: Math.max(...PROMPT_LENGTHS) }, (_, i) => 2 + ((i * 7919) % 31000))
  const start = async (side: Side): Promise<PeerChild> => {
    const peer = await handles[side].PeerChild.start({
      role: 'peer',
      peer: 'tandem',
      modelPath: file.path,
      threads,
      contextSize: CONTEXT,
      batchSize: 512,
      graphCacheDir: join(roots[side], 'bench', '.scratch', 'compare-cache'),
      peersDir: join(roots[side], 'bench', 'peers')
    })
    console.error(`${file.label} ${side}: loaded in ${peer.loadMs.toFixed(0)} ms`)
    // warm-up, untimed
    await peer.run({ op: 'reset', pos: 0 })
    await peer.run({ op: 'evaluate', tokens: prompt.slice(0, PROMPT_LENGTHS[0]), pos: 0 })
    return peer
  }
  const peers: Record<Side, PeerChild> = { old: await start('old'), new: await start('new') }
  for (let r = 0; r < reps; r++) {
    const order: Side[] = r % 2 === 0 ? ['old', 'new'] : ['new', 'old']
    for (const side of order) {
      const p = peers[side]
      for (const n of PROMPT_LENGTHS) {
        await p.run({ op: 'reset', pos: 0 })
        const e = await p.run({ op: 'evaluate', tokens: prompt.slice(0, n), pos: 0 })
        record(`${file.label} prefill ${n} tok/s`, side, (n * 1000) / e.ms)
      }
      await p.run({ op: 'reset', pos: 0 })
      const e = await p.run({ op: 'evaluate', tokens: prompt.slice(0, 16), pos: 0 })
      const d = await p.run({ op: 'decode', first: e.tokens[0], pos: 16, steps: DECODE_STEPS })
      record(`${file.label} decode tok/s`, side, (DECODE_STEPS * 1000) / d.ms)
    }
  }
  for (const side of ['old', 'new'] as const) await peers[side].close()
}

console.log(`${threads} threads, ${reps} alternating repetitions; old = ${roots.old}, new = ${roots.new}`)
console.log('| row | old: median (range) | new: median (range) | new/old |')
console.log('|---|---|---|---|')
for (const [row, v] of rows) {
  const range = (xs: number[]): string => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`
  console.log(`| ${row} | ${median(v.old).toFixed(1)} (${range(v.old)}) | ${median(v.new).toFixed(1)} (${range(v.new)}) | ${(median(v.new) / median(v.old)).toFixed(2)} |`)
}
