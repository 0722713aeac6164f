/** @file What the NPU-path benches share: the virtual NPU's throughput model, and running one measurement in a child. */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { NpuChildRequest } from './npu-child'

const run = promisify(execFile)
const CHILD = fileURLToPath(new URL('./npu-child.ts', import.meta.url))

/**
 * The virtual NPU's throughput model: 100 µs per launch, 4 TFLOP/s, and 500 ms of compiler time per fused graph
 * (vendor NPU compilers take seconds to minutes per graph). Stated with every row.
 */
export const VIRTUAL_NPU_BENCH_OPTIONS: Readonly<Record<string, string>> = Object.freeze({ launch_us: '100', gops: '4000', compile_ms: '500' })

/** Runs one measurement in a child process of its own (its RSS and the NPU's counters are its own); resolves to its JSON result. */
export async function npuChild<T>(request: NpuChildRequest): Promise<T> {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', CHILD, JSON.stringify(request)], { maxBuffer: 64 << 20, timeout: 30 * 60_000 })
  const last = stdout.trim().split('\n').at(-1) ?? ''
  return JSON.parse(last) as T
}
