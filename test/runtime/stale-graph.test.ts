/**
 * The cache's key samples a model's bytes (first, middle and last rows of each tensor); the full hash recorded
 * with each compiled graph is checked after a cached open. A model file rewritten in place where the sample does
 * not look — same size, same sampled rows — is caught there: the entry is removed and the next open compiles
 * from the bytes as they are.
 */
import { existsSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { graphDataPath } from '../../main/engine/graph'
import { loadModel } from '../../main/engine/model'
import { openModelWorker } from '../../main/engine/runtime/model-worker/model-worker-client'
import { writeRandomGgufModel } from '../fixtures/random-gguf'
import { tempDir } from '../helpers/paths'

const tmp = tempDir('tandem-stale-graph-')
afterAll(() => tmp.dispose())

describe('cached graph verification', () => {
  it('is verified after a compile and a clean cached open, stale after an unsampled change, then rebuilt', async () => {
    const path = `${tmp.dir}/model.gguf`
    await writeRandomGgufModel(path, { architecture: 'llama', dim: 64, hiddenDim: 128, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 512, contextLength: 64, tensorType: 'f32', seed: 5 })
    const cacheDir = `${tmp.dir}/cache`
    const openAndCheck = async (): Promise<{ cacheHit: boolean; verification: string; graphPath: string }> => {
      const worker = await openModelWorker(path, { cacheDir, threads: 1 })
      try {
        return { cacheHit: worker.compileInfo.cacheHit, verification: await worker.verification, graphPath: worker.compileInfo.graphPath }
      } finally {
        await worker.dispose()
      }
    }
    expect(await openAndCheck()).toMatchObject({ cacheHit: false, verification: 'verified' })
    const clean = await openAndCheck()
    expect(clean).toMatchObject({ cacheHit: true, verification: 'verified' })

    // flip one byte in row 1 of blk.0.ffn_up (rows 0, middle and last are sampled)
    const m = await loadModel(path, { weights: false })
    const up = m.layout.layers[0].wUp
    const fh = await open(path, 'r+')
    const at = up.offset + up.byteLength / up.shape[0] + 5
    const byte = new Uint8Array(1)
    await fh.read(byte, 0, 1, at)
    byte[0] ^= 0x40
    await fh.write(byte, 0, 1, at)
    await fh.close()

    const stale = await openAndCheck()
    expect(stale).toMatchObject({ cacheHit: true, verification: 'stale' })
    expect(existsSync(stale.graphPath) || existsSync(graphDataPath(stale.graphPath))).toBe(false)
    expect(await openAndCheck()).toMatchObject({ cacheHit: false, verification: 'verified' })
  })
})
