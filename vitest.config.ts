import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Engine tests start onnxruntime sessions in worker threads; two cores, so keep files in one fork pool
    // with modest parallelism and generous timeouts.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
