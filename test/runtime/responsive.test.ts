import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_PREFILL_CHUNK_TOKENS } from '../../main/engine/plan'
import { openModelWorker } from '../../main/engine/runtime/model-worker/model-worker-client'
import { writeRandomGgufModel } from '../fixtures/random-gguf'
import { tempDir } from '../helpers/paths'

/** Only a broken worker client (one that needs this thread to compute) spins this long; a working one takes a second or so. */
const SPIN_LIMIT_MS = 60_000

describe('ModelWorkerClient keeps the calling thread responsive', () => {
  it('a long prefill runs to the end while the calling thread runs other code and never yields to its event loop', async () => {
    const tmp = tempDir()
    try {
      // ~13M parameters (52 MB f32): a 512-token prefill is several chunks of blocking ORT work
      const path = join(tmp.dir, 'random-llama.gguf')
      await writeRandomGgufModel(path, {
        architecture: 'llama', dim: 512, hiddenDim: 1536, nLayers: 4, nHeads: 8, nKvHeads: 4,
        vocabSize: 512, contextLength: 1024, tensorType: 'f32', seed: 7
      })
      const runner = await openModelWorker(path, { cacheDir: tmp.dir, threads: 1, maxContext: 600 })
      try {
        const prompt = Array.from({ length: 512 }, (_, i) => (i * 37) % 512)
        const runs = Math.ceil(prompt.length / DEFAULT_PREFILL_CHUNK_TOKENS)
        const before = runner.usage().devices[0]
        const forward = runner.forward(prompt, 0)
        // Spin on this thread, reading the live usage board (shared memory, no messages), until every
        // chunk's session run is counted. This thread never returns to its event loop meanwhile, so the whole
        // forward must run elsewhere; seeing a run in progress rules out one that ran inside forward() itself.
        // No clock decides the verdict: the order of what the board shows does.
        let readings = 0
        let sawRunning = false
        const giveUpAt = performance.now() + SPIN_LIMIT_MS
        for (;;) {
          const d = runner.usage().devices[0]
          readings++
          // a run in progress counts live: busy time above the finished total of the runs counted so far
          if (d.runs < before.runs + runs && d.busyMs > before.busyMs) sawRunning = true
          if (d.runs >= before.runs + runs) break
          if (performance.now() > giveUpAt) throw new Error(`the forward did not finish in ${SPIN_LIMIT_MS} ms while this thread was busy`)
        }
        const logits = await forward
        const after = runner.usage().devices[0]
        console.log(`512-token prefill: ${runs} runs, ${(after.busyMs - before.busyMs).toFixed(0)} ms busy, read the board ${readings} times meanwhile`)
        expect(sawRunning).toBe(true)
        expect(after.runs - before.runs).toBe(runs)
        expect(logits.length).toBe(512)
        expect(logits.every(Number.isFinite)).toBe(true)
      } finally {
        await runner.dispose()
      }
    } finally {
      tmp.dispose()
    }
  })
})
