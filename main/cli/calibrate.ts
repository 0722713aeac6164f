/**
 * @file `tandem calibrate`: W8A8 calibration of a model on a plain-text corpus with the reference forward
 * (main/engine/model/calibrate.ts), stored beside the compiled graphs under the model's fingerprint. Prints where,
 * and what it found: the activation scales' spread, the hot channels and the share of outliers they carry, and the
 * layers in order of importance.
 */
import { calibrate, calibrationPath, loadModel, modelFingerprint, readTextCapped, resolveGraphCacheDir, writeCalibration } from '../engine'
import type { CalibrateArgs } from './args'

/** Largest corpus file read (a few thousand words is what calibration needs). */
const MAX_CORPUS_BYTES = 64 << 20

/** Runs `tandem calibrate`; returns the exit code. */
export async function calibrateCommand(args: CalibrateArgs): Promise<number> {
  const model = await loadModel(args.model, { tokenizerPath: args.tokenizer })
  if (!model.weights) throw new Error(`${args.model}: no weights`)
  const text = readTextCapped(args.corpus, MAX_CORPUS_BYTES, 'corpus')
  const ids = model.tokenizer.encode(text).slice(0, args.tokens)
  if (ids.length === 0) throw new Error(`${args.corpus}: no tokens in the corpus`)
  // windows from position 0, each led by BOS, as long as the context allows
  const bos = model.tokenizer.bosId
  const lead = bos === null ? [] : [bos]
  const window = Math.min(model.config.contextLength, 256) - lead.length
  const sequences: number[][] = []
  for (let i = 0; i < ids.length; i += window) sequences.push([...lead, ...ids.slice(i, i + window)])
  const compilable = { config: model.config, weights: model.weights }
  const t0 = performance.now()
  process.stderr.write(`tandem: calibrating on ${ids.length} tokens with the reference forward…\n`)
  const calibration = calibrate(compilable, sequences)
  const path = calibrationPath(resolveGraphCacheDir(args.cacheDir), modelFingerprint(compilable))
  await writeCalibration(path, calibration)
  const entries = Object.entries(calibration.matmuls)
  const channels = entries.reduce((n, [, m]) => n + m.inputChannels, 0)
  const hot = entries.reduce((n, [, m]) => n + m.hotChannels.length, 0)
  const outliers = entries.reduce((n, [, m]) => n + m.outliersPerChannel.reduce((a, b) => a + b, 0), 0)
  const covered = entries.reduce((n, [, m]) => n + m.hotOutlierShare * m.outliersPerChannel.reduce((a, b) => a + b, 0), 0)
  const layers = calibration.layerImportance.map((v, i) => [i, v] as const).sort((a, b) => b[1] - a[1])
  const summary = {
    path,
    tokens: calibration.tokens,
    seconds: (performance.now() - t0) / 1000,
    matmuls: entries.length,
    hotChannelShare: channels === 0 ? 0 : hot / channels,
    hotOutlierShare: outliers === 0 ? 1 : covered / outliers,
    layersByImportance: layers.map(([layer, importance]) => ({ layer, importance }))
  }
  if (args.json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`)
    return 0
  }
  process.stdout.write(
    `calibration: ${path}\n` +
      `${summary.tokens} tokens, ${summary.matmuls} layer matmuls, ${summary.seconds.toFixed(1)} s\n` +
      `hot channels: ${(summary.hotChannelShare * 100).toFixed(1)}% of input channels carry ${(summary.hotOutlierShare * 100).toFixed(0)}% of the outliers\n` +
      `layers by importance: ${layers.map(([l, v]) => `${l} (${v.toExponential(1)})`).join(', ')}\n`
  )
  return 0
}
