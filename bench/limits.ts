/**
 * @file This machine's ceilings, measured through the same onnxruntime CPU EP the engine uses (via
 * main/engine/devices): memory read bandwidth as a ReduceSum over a large float32 input (inputs are
 * passed without a copy, so the run is one streaming read; a JS loop would be compute-bound), and fp32
 * GFLOP/s as a large MatMul whose result is reduced in-graph (ORT outputs are costly, toolchain §8).
 * A second bandwidth probe, a plain read loop (read-loop.ts: libc memchr over the same number of bytes),
 * runs right after the ReduceSum on the same thread count: the two have differed by ~2× on this machine.
 */
import { createSession, float32Tensor, ortVersion, type OrtSession } from '../main/engine/devices'
import { GraphBuilder } from '../main/engine/graph'
import type { LimitSamples, LimitsInit } from './protocol'
import { measureReadLoop } from './read-loop'

/** Row length of the bandwidth buffer: rows are summed in parallel by ORT's intra-op pool. */
const BANDWIDTH_COLS = 1 << 16

/** ReduceSum over axis 1 of [rows, cols] -> [rows]: reads every element once. */
function reduceSumGraph(rows: number, cols: number): Uint8Array {
  const g = new GraphBuilder('bench_bandwidth')
  const x = g.input('x', 'float32', [rows, cols])
  const axes = g.i64('axes', [1], [1])
  const y = g.node('ReduceSum', [x, axes], { outputs: ['y'], attrs: { keepdims: { int: 0 } } })[0]
  g.output(y, 'float32', [rows])
  return g.toBytes('tandem-bench')
}

/** MatMul [m,k]·[k,n] then ReduceSum over n -> [m], so the output is small. */
function matmulGraph(m: number, k: number, n: number): Uint8Array {
  const g = new GraphBuilder('bench_matmul')
  const a = g.input('a', 'float32', [m, k])
  const b = g.input('b', 'float32', [k, n])
  const c = g.op('MatMul', [a, b])
  const axes = g.i64('axes', [1], [1])
  const y = g.node('ReduceSum', [c, axes], { outputs: ['y'], attrs: { keepdims: { int: 0 } } })[0]
  g.output(y, 'float32', [m])
  return g.toBytes('tandem-bench')
}

/** Milliseconds of each of `reps` runs after one discarded warm-up run. */
async function timeRuns(session: OrtSession, feeds: Parameters<OrtSession['run']>[0], reps: number): Promise<number[]> {
  await session.run(feeds)
  const out: number[] = []
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now()
    await session.run(feeds)
    out.push(performance.now() - t0)
  }
  return out
}

/** Fills with small values (touches every page, so the first timed run does not pay page faults). */
function filled(n: number, seed: number): Float32Array {
  const a = new Float32Array(n)
  for (let i = 0; i < n; i++) a[i] = ((i * 2654435761 + seed) % 1000) / 1000 - 0.5
  return a
}

/** Bandwidth and MatMul samples for each thread count. */
export async function measureLimits(init: LimitsInit): Promise<{ samples: LimitSamples[]; ortVersion: string }> {
  const cols = BANDWIDTH_COLS
  const rows = Math.max(1, Math.floor(init.bandwidthBytes / 4 / cols))
  const buffer = filled(rows * cols, 1)
  const bufferBytes = buffer.byteLength
  const [m, k, n] = init.matmul
  const a = filled(m * k, 2)
  const b = filled(k * n, 3)
  const flops = 2 * m * k * n

  const samples: LimitSamples[] = []
  for (const threads of init.threadCounts) {
    const config = { ep: 'cpu' as const, intraOpThreads: threads, interOpThreads: 1 }
    const reduce = await createSession(reduceSumGraph(rows, cols), config)
    let bandwidthMs: number[]
    try {
      bandwidthMs = await timeRuns(reduce, { x: float32Tensor(buffer, [rows, cols]) }, init.reps)
    } finally {
      await reduce.release()
    }
    const readLoopGBs = await measureReadLoop(bufferBytes, threads, init.reps)
    const matmul = await createSession(matmulGraph(m, k, n), config)
    let matmulMs: number[]
    try {
      matmulMs = await timeRuns(matmul, { a: float32Tensor(a, [m, k]), b: float32Tensor(b, [k, n]) }, init.reps)
    } finally {
      await matmul.release()
    }
    samples.push({
      threads,
      bandwidthGBs: bandwidthMs.map((ms) => bufferBytes / (ms / 1000) / 1e9),
      readLoopGBs,
      matmulGflops: matmulMs.map((ms) => flops / (ms / 1000) / 1e9)
    })
  }
  return { samples, ortVersion: ortVersion() }
}
