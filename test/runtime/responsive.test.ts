import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { openModelWorker } from '../../main/engine/runtime/model-worker/model-worker-client'
import { writeRandomGgufModel } from '../fixtures/random-gguf'
import { tempDir } from '../helpers/paths'

describe('ModelWorkerClient keeps the calling thread responsive', () => {
  it('the event loop ticks while the worker runs a long prefill', async () => {
    const tmp = tempDir()
    try {
      // ~13M parameters (52 MB f32): a 512-token prefill takes a few hundred ms of blocking ORT work
      const path = join(tmp.dir, 'random-llama.gguf')
      await writeRandomGgufModel(path, {
        architecture: 'llama', dim: 512, hiddenDim: 1536, nLayers: 4, nHeads: 8, nKvHeads: 4,
        vocabSize: 512, contextLength: 1024, tensorType: 'f32', seed: 7
      })
      const runner = await openModelWorker(path, { cacheDir: tmp.dir, threads: 1, maxContext: 600 })
      try {
        const prompt = Array.from({ length: 512 }, (_, i) => (i * 37) % 512)
        const ticks: number[] = []
        const timer = setInterval(() => ticks.push(performance.now()), 5)
        const t0 = performance.now()
        await runner.forward(prompt, 0)
        const t1 = performance.now()
        clearInterval(timer)
        const during = [t0, ...ticks.filter((t) => t >= t0 && t <= t1), t1]
        let maxGapMs = 0
        for (let i = 1; i < during.length; i++) maxGapMs = Math.max(maxGapMs, during[i] - during[i - 1])
        console.log(`512-token prefill ${(t1 - t0).toFixed(0)} ms; ${during.length - 2} timer ticks, longest gap ${maxGapMs.toFixed(1)} ms`)
        // a forward on this thread would allow no tick at all (one gap as long as the forward)
        expect(t1 - t0).toBeGreaterThan(50)
        expect(during.length - 2).toBeGreaterThanOrEqual(3)
        expect(maxGapMs).toBeLessThan((t1 - t0) / 2)
      } finally {
        await runner.dispose()
      }
    } finally {
      tmp.dispose()
    }
  })
})
