/**
 * @file W8A8 calibrations on disk, beside the compiled graphs and keyed the same way (the model's fingerprint):
 * `<cache>/calibration/<model hash>.json`. A file is distrusted like any other: every field is checked, its
 * matmuls must be this model's layer matmuls with their input widths, and a file that fails is reported, never
 * half-used.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { FieldReader, failWith, readNumber } from '../../common/reader'
import { CALIBRATION_VERSION, layerMatmuls, type Calibration, type MatmulCalibration, type ModelWeights } from '../model'
import { writeGraphAtomic } from './cache'

/** The calibration folder inside a graph cache folder. */
export const CALIBRATION_DIR = 'calibration'
/** Largest calibration file read (a 8B model's per-channel outlier counts are a few MB). */
const MAX_CALIBRATION_BYTES = 64 << 20
/** Longest tensor name accepted. */
const MAX_TENSOR_NAME = 256
/** Widest matmul input accepted. */
const MAX_CHANNELS = 1 << 20

/** Where the calibration of the model with fingerprint `modelHash` lives. */
export function calibrationPath(cacheDir: string, modelHash: string): string {
  if (!/^[0-9a-f]{64}$/.test(modelHash)) throw new RangeError(`not a model fingerprint: ${modelHash.slice(0, 80)}`)
  return join(cacheDir, CALIBRATION_DIR, `${modelHash}.json`)
}

/** Writes `calibration` to `path` atomically. */
export async function writeCalibration(path: string, calibration: Calibration): Promise<void> {
  await writeGraphAtomic(path, new TextEncoder().encode(`${JSON.stringify(calibration)}\n`))
}

/** Reads and checks the calibration at `path` for `weights`; throws an Error naming the file and the field. */
export async function readCalibration(path: string, weights: ModelWeights): Promise<Calibration> {
  const bytes = await readFile(path)
  if (bytes.byteLength > MAX_CALIBRATION_BYTES) throw new Error(`${path}: larger than ${MAX_CALIBRATION_BYTES} bytes, not a calibration`)
  let json: unknown
  try {
    json = JSON.parse(bytes.toString('utf8'))
  } catch (e) {
    throw new Error(`${path}: not JSON (${e instanceof Error ? e.message : String(e)})`)
  }
  const fail = failWith((m) => new Error(`${path}: ${m}`))
  const r = new FieldReader(fail, 'calibration', json, ['version', 'tokens', 'matmuls', 'layerImportance'])
  const version = r.int('version', 1, 1_000)
  if (version !== CALIBRATION_VERSION) r.reject('version', `${version} is not supported (this build reads version ${CALIBRATION_VERSION})`)
  const nLayers = weights.layers.length
  const expected = layerMatmuls(weights)
  const byName = new Map([...expected].map(([t, layer]) => [t.name, { layer, cols: t.shape[1] }]))
  const m = r.record('matmuls')
  const names = Object.keys(m.value)
  if (names.length !== byName.size) r.reject('matmuls', `has ${names.length} entries, the model has ${byName.size} layer matmuls`)
  const matmuls: Record<string, MatmulCalibration> = {}
  for (const name of names) {
    const want = byName.get(name)
    if (name.length > MAX_TENSOR_NAME || want === undefined) return r.reject('matmuls', `${JSON.stringify(name.slice(0, 80))} is not a layer matmul of this model`)
    const e = m.record(name, ['layer', 'scale', 'inputChannels', 'outliersPerChannel', 'outlierChannels', 'hotChannels', 'hotOutlierShare'])
    const inputChannels = e.int('inputChannels', 1, MAX_CHANNELS)
    if (inputChannels !== want.cols) e.reject('inputChannels', `${inputChannels}, but the weight has ${want.cols} input channels`)
    const layer = e.int('layer', 0, nLayers - 1)
    if (layer !== want.layer) e.reject('layer', `${layer}, but the weight is in layer ${want.layer}`)
    matmuls[name] = {
      layer,
      scale: e.number('scale', Number.MIN_VALUE, Number.MAX_VALUE),
      inputChannels,
      outliersPerChannel: e.ints('outliersPerChannel', inputChannels, 0, Number.MAX_SAFE_INTEGER, inputChannels),
      outlierChannels: e.int('outlierChannels', 0, inputChannels),
      hotChannels: e.ints('hotChannels', inputChannels, 0, inputChannels - 1),
      hotOutlierShare: e.number('hotOutlierShare', 0, 1)
    }
  }
  return {
    version,
    tokens: r.int('tokens', 1, Number.MAX_SAFE_INTEGER),
    matmuls,
    layerImportance: r.list('layerImportance', nLayers, nLayers).map((v, i) => readNumber(fail, `calibration.layerImportance[${i}]`, v, 0, Number.MAX_VALUE))
  }
}
