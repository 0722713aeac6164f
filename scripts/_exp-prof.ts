import { readFileSync, readdirSync, rmSync } from 'node:fs'
import * as ort from 'onnxruntime-node'
/** aggregates an ORT profile JSON: per op type total µs over runs */
export function summarize(file: string, runs: number): void {
  const ev = JSON.parse(readFileSync(file, 'utf8')) as Array<{ cat: string; name: string; dur: number; args?: { op_name?: string } }>
  const by = new Map<string, number>()
  let total = 0
  for (const e of ev) {
    if (e.cat === 'Session' && e.name === 'model_run') total += e.dur
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue
    const op = e.args?.op_name ?? '?'
    by.set(op, (by.get(op) ?? 0) + e.dur)
  }
  const rows = [...by].sort((a, b) => b[1] - a[1])
  console.log(`model_run avg ${(total / runs / 1000).toFixed(3)} ms`)
  for (const [op, us] of rows) console.log(`  ${op.padEnd(28)} ${(us / runs / 1000).toFixed(3)} ms/run`)
}
export async function profileRuns(bytes: Uint8Array, feeds: Record<string, ort.Tensor>, threads: number, runs: number): Promise<void> {
  const prefix = `/tmp/exp/prof-${process.pid}`
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all', executionMode: 'sequential', enableProfiling: true, profileFilePrefix: prefix })
  for (let i = 0; i < runs; i++) await s.run(feeds)
  s.endProfiling()
  await s.release()
  const f = readdirSync('/tmp/exp').filter((n) => n.startsWith(`prof-${process.pid}`))
  summarize(`/tmp/exp/${f[0]}`, runs)
  rmSync(`/tmp/exp/${f[0]}`)
}
