/**
 * @file Calibrations on disk: written under the model's fingerprint beside the graphs, read back equal, and a
 * file that is not this model's calibration (another model, a damaged field, a truncated write) refused with a
 * message naming the file and the field — never half-used.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { calibrationPath, modelFingerprint, readCalibration, writeCalibration } from '../../main/engine/graph'
import { calibrate } from '../../main/engine/model/calibrate'
import { randomModel } from '../graph/random-model'
import { tempDir } from '../helpers/paths'

const temp = tempDir('tandem-calibration-')
afterAll(() => temp.dispose())

const model = randomModel({ seed: 3, dim: 32, hiddenDim: 64, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 40, contextLength: 32 })
const other = randomModel({ seed: 4, dim: 48, hiddenDim: 64, nLayers: 2, nHeads: 4, nKvHeads: 2, vocabSize: 40, contextLength: 32 })
const calibration = calibrate(model, [[1, 5, 9, 13, 17, 21, 25, 29]])

describe('calibration files', () => {
  it('are written under the model fingerprint and read back as they were', async () => {
    const path = calibrationPath(temp.dir, modelFingerprint(model))
    expect(path).toBe(join(temp.dir, 'calibration', `${modelFingerprint(model)}.json`))
    await writeCalibration(path, calibration)
    expect(await readCalibration(path, model.weights)).toEqual(calibration)
  })

  it('refuse another model’s calibration, a damaged field and a truncated file, naming the file and the field', async () => {
    const path = calibrationPath(temp.dir, modelFingerprint(model))
    await expect(readCalibration(path, other.weights)).rejects.toThrow(/inputChannels: 32, but the weight has 48 input channels/)
    const damaged = join(temp.dir, 'damaged.json')
    const json = JSON.parse(JSON.stringify(calibration)) as { matmuls: Record<string, { scale: number }> }
    const first = Object.keys(json.matmuls)[0]
    json.matmuls[first].scale = -1
    writeFileSync(damaged, JSON.stringify(json))
    await expect(readCalibration(damaged, model.weights)).rejects.toThrow(new RegExp(`damaged\\.json: .*${first.replace(/\./g, '\\.')}\\.scale`))
    const truncated = join(temp.dir, 'truncated.json')
    writeFileSync(truncated, JSON.stringify(calibration).slice(0, 200))
    await expect(readCalibration(truncated, model.weights)).rejects.toThrow(/truncated\.json: not JSON/)
    expect(() => calibrationPath(temp.dir, '../../etc/passwd')).toThrow(/not a model fingerprint/)
  })
})
