/**
 * @file `npm run eval`: what each quantization costs in accuracy, measured with the reference forward (the oracle
 * every compiled graph is checked against). For stories260K, TinyStories-656K and a seeded random Llama with
 * injected activation-outlier channels: float32 vs W8A8 (per-channel int8 weights, per-tensor int8 activations, as
 * an integer NPU runs them) without the shadow, and with llm.npu's shadow outlier execution with 0 / 85 / 100% of
 * the layers pruned. Calibrated on eval/corpus/calibration.txt, scored on eval/corpus/evaluation.txt: mean KL
 * divergence of the next-token distribution to float32, top-1 agreement, perplexity. Also the shadow's memory: the
 * hot channels' float columns vs keeping every outlier channel. And our CPU path's MatMulNBits 8-bit and 4-bit
 * weights (Q8_0 / Q4_0 blocks, int8 activations per block) through the real compiled graph and ONNX Runtime, so
 * users see what each quantization costs. Writes eval/results/<date>.{md,json}.
 *
 *   npm run eval [-- --quick]     (--quick: fewer evaluation windows, the same models and methods)
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadModel, type ModelConfig, type ModelWeights } from '../main/engine/model'
import { calibrate, forEachPosition, layerMatmuls, w8a8Linears, w8a8Reference, type Calibration, type W8A8Setup } from '../main/engine/model/calibrate'
import { createCpuSession } from '../main/engine/devices'
import { compileModel } from '../main/engine/graph'
import { tensorToFloat32 } from '../main/engine/model'
import type { LayerWeights, Tensor } from '../main/engine/model/types'
import { SingleSessionEngine } from '../main/engine/runtime'
import { encodeTensor } from '../test/fixtures/quantize'
import { outlierModel } from '../test/fixtures/outlier-model'
import { Rng } from '../test/fixtures/rng'
import { sharedModel } from '../test/helpers/paths'
import { Agreement, logSoftmax } from './metrics'

const EVAL_DIR = fileURLToPath(new URL('.', import.meta.url))
const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, out: { type: 'string' } } })
const quick = values.quick ?? false
/** Tokens per window (each window starts at position 0 with BOS). */
const WINDOW = 128
/** Calibration windows, evaluation windows. */
const CAL_WINDOWS = quick ? 4 : 8
const EVAL_WINDOWS = quick ? 4 : 12

interface Model {
  readonly config: ModelConfig
  readonly weights: ModelWeights
}

interface EvalModel {
  readonly id: string
  readonly label: string
  readonly model: Model
  readonly calibration: ReadonlyArray<readonly number[]>
  readonly evaluation: ReadonlyArray<readonly number[]>
  /** the float model's perplexity means something (trained weights, real text) */
  readonly trained: boolean
}

/** One method of the report. */
interface Method {
  readonly method: 'fp32' | 'w8a8' | 'w8a8-shadow' | 'nbits8' | 'nbits4'
  readonly prunedPercent: number | null
  readonly setup: W8A8Setup | null
}

const METHODS: readonly Method[] = [
  { method: 'fp32', prunedPercent: null, setup: null },
  { method: 'w8a8', prunedPercent: null, setup: { shadow: false, prunedPercent: 0 } },
  { method: 'w8a8-shadow', prunedPercent: 0, setup: { shadow: true, prunedPercent: 0 } },
  { method: 'w8a8-shadow', prunedPercent: 85, setup: { shadow: true, prunedPercent: 85 } },
  { method: 'w8a8-shadow', prunedPercent: 100, setup: { shadow: true, prunedPercent: 100 } }
]

/** `tokens` cut into windows of WINDOW tokens, each led by `bos`, at most `count` of them. */
function windows(tokens: readonly number[], bos: number, count: number): number[][] {
  const out: number[][] = []
  for (let i = 0; i + WINDOW - 1 <= tokens.length && out.length < count; i += WINDOW - 1) out.push([bos, ...tokens.slice(i, i + WINDOW - 1)])
  return out
}

async function trainedModel(id: string, label: string, path: string): Promise<EvalModel> {
  const loaded = await loadModel(path)
  if (!loaded.weights) throw new Error(`${path}: no weights`)
  const text = async (name: string): Promise<number[]> => loaded.tokenizer.encode(await readFile(join(EVAL_DIR, 'corpus', name), 'utf8'))
  const bos = loaded.tokenizer.bosId ?? 1
  return {
    id,
    label,
    model: { config: loaded.config, weights: loaded.weights },
    calibration: windows(await text('calibration.txt'), bos, CAL_WINDOWS),
    evaluation: windows(await text('evaluation.txt'), bos, EVAL_WINDOWS),
    trained: true
  }
}

/** The outlier model: 4 of 256 hidden channels 20–100× larger (outlier-model.ts); seeded token ids, no text. */
function randomOutlierModel(): EvalModel {
  const model = outlierModel({ seed: 1311, dim: 256, hiddenDim: 704, nLayers: 6, nHeads: 8, nKvHeads: 4, vocabSize: 512, contextLength: WINDOW }, { channels: 4, minFactor: 20, maxFactor: 100 })
  const ids = (seed: number, n: number): number[][] => {
    const rng = new Rng(seed)
    return Array.from({ length: n }, () => [1, ...Array.from({ length: WINDOW - 1 }, () => 2 + Math.floor(rng.uniform() * 510))])
  }
  return { id: 'random-outliers', label: 'random Llama, 4 outlier channels (20–100×)', model, calibration: ids(7, CAL_WINDOWS), evaluation: ids(8, EVAL_WINDOWS), trained: false }
}

/** Log-probabilities of every evaluation position under `setup` (null: float32). */
function logProbs(m: EvalModel, calibration: Calibration, setup: W8A8Setup | null): Float64Array[][] {
  const linears = setup === null ? null : w8a8Linears(m.model, calibration, setup)
  return m.evaluation.map((seq) => {
    const out: Float64Array[] = []
    forEachPosition(m.model, seq, linears === null ? {} : w8a8Reference(linears), (_, logits) => out.push(logSoftmax(logits)))
    return out
  })
}

/** GGML blocks are 32 values along a row: a matrix whose rows are not whole blocks stays float32. */
const BLOCK = 32

/** `m`'s layer matmuls in Q8_0 or Q4_0 (those whose rows are whole blocks), the rest as they were. */
function nbitsModel(m: Model, encoding: 'q8_0' | 'q4_0'): { model: Model; quantized: number; total: number } {
  let quantized = 0
  let total = 0
  const encode = (t: Tensor): Tensor => {
    total++
    if (t.shape[1] % BLOCK !== 0) return t
    quantized++
    return { name: t.name, shape: t.shape, data: { kind: 'ggml', dtype: encoding, bytes: encodeTensor(encoding, tensorToFloat32(t), 'fast') } }
  }
  const layers: LayerWeights[] = m.weights.layers.map((l) => ({ ...l, wq: encode(l.wq), wk: encode(l.wk), wv: encode(l.wv), wo: encode(l.wo), wGate: encode(l.wGate), wUp: encode(l.wUp), wDown: encode(l.wDown) }))
  return { model: { config: m.config, weights: { ...m.weights, layers } }, quantized, total }
}

/** Log-probabilities of every evaluation position through our compiled CPU graph (the engine's single session). */
async function graphLogProbs(m: EvalModel, model: Model): Promise<Float64Array[][]> {
  const compilable = { config: { ...model.config, contextLength: WINDOW }, weights: model.weights }
  const engine = new SingleSessionEngine(compilable, await createCpuSession(compileModel(compilable, { ropeTableLength: WINDOW }), {}), { contextLength: WINDOW, prefillChunkTokens: 1 })
  try {
    const out: Float64Array[][] = []
    for (const seq of m.evaluation) {
      const positions: Float64Array[] = []
      for (let pos = 0; pos < seq.length; pos++) positions.push(logSoftmax(await engine.forward([seq[pos]], pos)))
      out.push(positions)
    }
    return out
  } finally {
    await engine.dispose()
  }
}

interface Row {
  readonly model: string
  readonly method: Method['method']
  readonly prunedPercent: number | null
  readonly kl: number
  readonly top1: number
  readonly perplexity: number
  readonly positions: number
}

/** The shadow's float memory: the hot channels' columns vs every outlier channel's, as shares of the layer matmuls. */
function shadowMemory(m: EvalModel, calibration: Calibration): { hotShare: number; allOutlierShare: number; hotChannelShare: number; hotOutlierShare: number } {
  let total = 0
  let hot = 0
  let all = 0
  let channels = 0
  let hotChannels = 0
  let outliers = 0
  let hotOutliers = 0
  for (const t of layerMatmuls(m.model.weights).keys()) {
    const c = calibration.matmuls[t.name]
    const [rows, cols] = t.shape
    total += rows * cols
    hot += rows * c.hotChannels.length
    all += rows * c.outlierChannels
    channels += cols
    hotChannels += c.hotChannels.length
    const sum = c.outliersPerChannel.reduce((a, b) => a + b, 0)
    outliers += sum
    hotOutliers += c.hotOutlierShare * sum
  }
  return { hotShare: hot / total, allOutlierShare: all / total, hotChannelShare: hotChannels / channels, hotOutlierShare: outliers === 0 ? 1 : hotOutliers / outliers }
}

async function main(): Promise<void> {
  const started = new Date()
  const models = [
    await trainedModel('stories260K', 'stories260K (llama2.c, trained)', sharedModel('stories260K/stories260K.gguf')),
    await trainedModel('tinystories-656K', 'TinyStories-656K (Hugging Face, trained)', sharedModel('tinystories-656K')),
    randomOutlierModel()
  ]
  const rows: Row[] = []
  const memory: Record<string, ReturnType<typeof shadowMemory>> = {}
  const quantizedShare: Record<string, { quantized: number; total: number }> = {}
  for (const m of models) {
    const t0 = performance.now()
    const calibration = calibrate(m.model, m.calibration)
    memory[m.id] = shadowMemory(m, calibration)
    const reference = logProbs(m, calibration, null)
    const nbits: Method[] = []
    const nbitsProbs = new Map<Method, Float64Array[][]>()
    for (const [method, encoding] of [['nbits8', 'q8_0'], ['nbits4', 'q4_0']] as const) {
      const q = nbitsModel(m.model, encoding)
      const entry: Method = { method, prunedPercent: null, setup: null }
      nbits.push(entry)
      nbitsProbs.set(entry, await graphLogProbs(m, q.model))
      quantizedShare[`${m.id}/${method}`] = { quantized: q.quantized, total: q.total }
    }
    for (const method of [...METHODS, ...nbits]) {
      const got = nbitsProbs.get(method) ?? (method.setup === null ? reference : logProbs(m, calibration, method.setup))
      const agreement = new Agreement()
      m.evaluation.forEach((seq, w) => got[w].forEach((lp, pos) => agreement.add(reference[w][pos], lp, pos + 1 < seq.length ? seq[pos + 1] : null)))
      const r = agreement.result
      rows.push({ model: m.id, method: method.method, prunedPercent: method.prunedPercent, kl: r.kl, top1: r.top1, perplexity: r.perplexity, positions: r.positions })
    }
    process.stderr.write(`[eval] ${m.label}: ${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
  }

  const date = started.toISOString().slice(0, 10)
  const base = quick ? `${date}-quick` : date
  const outDir = values.out ?? join(EVAL_DIR, 'results')
  await mkdir(outDir, { recursive: true })
  const json = { schema: 1, startedAt: started.toISOString(), quick, window: WINDOW, calibrationWindows: CAL_WINDOWS, evaluationWindows: EVAL_WINDOWS, rows, shadowMemory: memory, nbitsQuantizedMatmuls: quantizedShare }
  await writeFile(join(outDir, `${base}.json`), `${JSON.stringify(json, null, 2)}\n`)
  const md = render(models, rows, memory, quantizedShare, base)
  await writeFile(join(outDir, `${base}.md`), md)
  process.stdout.write(md)
}

const METHOD_NAMES: Readonly<Record<Method['method'], string>> = {
  fp32: 'float32',
  w8a8: 'W8A8, no shadow',
  'w8a8-shadow': 'W8A8 + shadow',
  nbits8: 'CPU MatMulNBits 8-bit (Q8_0, compiled graph)',
  nbits4: 'CPU MatMulNBits 4-bit (Q4_0, compiled graph)'
}

function render(
  models: readonly EvalModel[],
  rows: readonly Row[],
  memory: Record<string, ReturnType<typeof shadowMemory>>,
  quantized: Record<string, { quantized: number; total: number }>,
  base: string
): string {
  const name = (r: Row): string => {
    const q = quantized[`${r.model}/${r.method}`]
    const partial = q !== undefined && q.quantized < q.total ? ` (${q.quantized} of ${q.total} matmuls; the rest are not whole ${BLOCK}-value blocks)` : ''
    return r.method === 'w8a8-shadow' ? `${METHOD_NAMES[r.method]}, ${r.prunedPercent}% of layers pruned` : `${METHOD_NAMES[r.method]}${partial}`
  }
  const lines = [
    `# Tandem eval (${base})`,
    '',
    `Reference forward, ${WINDOW}-token windows from position 0; calibrated on ${CAL_WINDOWS} windows of eval/corpus/calibration.txt, scored on ${EVAL_WINDOWS} of eval/corpus/evaluation.txt (the random model: seeded token ids). W8A8 and the MatMulNBits rows cover every layer matmul (q, k, v, o, gate, up, down); embeddings and the lm-head stay float32. The shadow repairs hot-channel outliers from float columns and cold ones by the float fallback. The MatMulNBits rows run the real compiled graph through ONNX Runtime (int8 activations per 32-value block, as the CPU path runs quantized models).`,
    ''
  ]
  for (const m of models) {
    const mem = memory[m.id]
    lines.push(`## ${m.label}`, '', '| method | KL to float32 | top-1 agreement | perplexity |', '|---|---:|---:|---:|')
    for (const r of rows.filter((x) => x.model === m.id)) lines.push(`| ${name(r)} | ${r.kl.toExponential(2)} | ${(r.top1 * 100).toFixed(1)}% | ${r.perplexity.toFixed(2)}${m.trained ? '' : ' (random weights)'} |`)
    lines.push(
      '',
      `Shadow memory: the hot channels (${(mem.hotChannelShare * 100).toFixed(1)}% of input channels, carrying ${(mem.hotOutlierShare * 100).toFixed(0)}% of the outliers) keep ${(mem.hotShare * 100).toFixed(2)}% of the layer matmuls' weights in float; every channel with an outlier would keep ${(mem.allOutlierShare * 100).toFixed(2)}% (hot channels: ${mem.allOutlierShare === 0 ? '–' : `−${((1 - mem.hotShare / mem.allOutlierShare) * 100).toFixed(0)}%`}; llm.npu: −34%).`,
      ''
    )
  }
  return `${lines.join('\n')}\n`
}

main().catch((e: unknown) => {
  process.stderr.write(`eval failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`)
  process.exitCode = 1
})
