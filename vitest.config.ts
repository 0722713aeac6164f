import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { defineConfig } from 'vitest/config'

/**
 * The slowest files, longest first (measured on the CI machine). Without a results cache — a fresh clone, as CI
 * runs — vitest starts larger files first, which left a 1-test file of three minutes (the 2 GiB graph) to start
 * near the end and run alone while the other worker idled. Starting these first keeps both workers busy to the end.
 */
const SLOWEST_FIRST = [
  'test/runtime/large-graph.test.ts',
  'test/cli/placement.test.ts',
  'test/cli/cli.test.ts',
  'test/runtime/device-workers-engine.test.ts',
  'test/services/kv-snapshots.test.ts',
  'test/runtime/placements-property.test.ts',
  'test/cli/summarize.test.ts',
  'test/services/branches.test.ts',
  'test/services/chat-faults.test.ts',
  'test/runtime/profiler.test.ts',
  'test/runtime/kv-snapshot.test.ts'
]

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const i = SLOWEST_FIRST.findIndex((f) => spec.moduleId.replaceAll('\\', '/').endsWith(f))
      return i < 0 ? SLOWEST_FIRST.length : i
    }
    // a stable sort: the rest keep vitest's own order (its cache's durations when there is one)
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Engine tests start onnxruntime sessions in worker threads; two cores, so keep files in one fork pool
    // with modest parallelism and generous timeouts.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    sequence: { sequencer: SlowestFirst }
  }
})
