/**
 * @file Running a model in W8A8 with llm.npu's shadow: the stored calibration (`tandem calibrate`) becomes the
 * graphs' activation scales and the shadow segments' layers and hot channels. The one place a W8A8 request is
 * checked and turned into engine options.
 */
import { calibrationPath, modelFingerprint, readCalibration, resolveGraphCacheDir, type CompilableModel } from '../graph'
import { shadowLayers } from '../model'
import type { ShadowLayers } from './hetero/device-setup'

/** What a caller asks for: W8A8 layer matmuls, with the shadow pruned in this share of the layers. */
export interface W8A8Request {
  /** 0–100: the least important layers (by calibration) that skip the shadow; 100 = no shadow at all */
  readonly shadowPrunedPercent: number
}

/** Throws a RangeError unless `r` is a valid request. */
export function checkW8A8Request(r: W8A8Request): void {
  const p = r.shadowPrunedPercent
  if (typeof p !== 'number' || !(p >= 0 && p <= 100)) throw new RangeError(`shadowPrunedPercent must be a number from 0 to 100, got ${String(p)}`)
}

/** The engine options of a W8A8 run: activation scales for the graphs, and the shadow segments. */
export interface W8A8EngineOptions {
  readonly scales: Readonly<Record<string, number>>
  readonly shadow: ShadowLayers
}

/** Reads the model's stored calibration from the graph cache; a missing one says how to make it. */
export async function loadW8A8(model: CompilableModel, cacheDir: string | undefined, request: W8A8Request): Promise<W8A8EngineOptions> {
  checkW8A8Request(request)
  const path = calibrationPath(resolveGraphCacheDir(cacheDir), modelFingerprint(model))
  const calibration = await readCalibration(path, model.weights).catch((err: unknown) => {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT') {
      throw new Error(`W8A8 needs this model's calibration, and there is none at ${path}: run \`npx tandem calibrate --model PATH --corpus FILE\` first (with the same --cache-dir)`)
    }
    throw err
  })
  const scales = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.scale]))
  const hot = Object.fromEntries(Object.entries(calibration.matmuls).map(([name, m]) => [name, m.hotChannels]))
  return { scales, shadow: { layers: shadowLayers(calibration, request.shadowPrunedPercent), hot } }
}
