/**
 * @file Seeded random in-memory models (config + weights, no file) for graph tests: any architecture
 * option the compiler handles, matrices in any encoding the loaders produce (dense, ggml blocks via the
 * shared quantize fixture, llama2.c int8 groups).
 */
import type { LayerWeights, ModelConfig, ModelWeights, Tensor, TensorData } from '../../main/engine/model/types'
import { encodeTensor, type Encoding } from '../fixtures/quantize'
import { deriveSeed, Rng } from '../fixtures/rng'

/** Matrix encodings a random model can use. */
export type MatrixEncoding = Encoding | 'int8-groups'

/** What to build; unspecified fields default to a small GQA llama. */
export interface RandomModelSpec {
  readonly seed: number
  readonly dim?: number
  readonly hiddenDim?: number
  readonly nLayers?: number
  readonly nHeads?: number
  readonly nKvHeads?: number
  readonly vocabSize?: number
  readonly contextLength?: number
  readonly ropePairing?: ModelConfig['ropePairing']
  readonly ropeDim?: number
  readonly ropeScaling?: ModelConfig['ropeScaling']
  readonly ropeTheta?: number
  readonly qkvBias?: boolean
  readonly tiedEmbeddings?: boolean
  readonly architecture?: ModelConfig['architecture']
  /** encoding of every 2-D weight (embedding, projections, lm head) */
  readonly encoding?: MatrixEncoding
  /** per-matrix override by role ('wq', 'wv', 'wDown', 'output', 'tokenEmbedding', ...) */
  readonly encodingFor?: (role: string, layer: number) => MatrixEncoding | undefined
  /** llama2.c group size for 'int8-groups' (default 32) */
  readonly groupSize?: number
}

/** A model as the compiler and the reference take it. */
export interface RandomModel {
  readonly config: ModelConfig
  readonly weights: ModelWeights
}

/** llama2.c version-2 quantization: per group of `groupSize` flat values, scale = max|x| / 127. */
function int8Groups(x: Float32Array, groupSize: number): TensorData {
  const values = new Int8Array(x.length)
  const scales = new Float32Array(Math.ceil(x.length / groupSize))
  for (let g = 0; g < scales.length; g++) {
    let max = 0
    for (let i = g * groupSize; i < Math.min(x.length, (g + 1) * groupSize); i++) max = Math.max(max, Math.abs(x[i]))
    const scale = max / 127
    scales[g] = scale
    for (let i = g * groupSize; i < Math.min(x.length, (g + 1) * groupSize); i++) values[i] = scale === 0 ? 0 : Math.round(x[i] / scale)
  }
  return { kind: 'int8-groups', values, scales, groupSize }
}

function encode(x: Float32Array, encoding: MatrixEncoding, groupSize: number): TensorData {
  if (encoding === 'int8-groups') return int8Groups(x, groupSize)
  const bytes = encodeTensor(encoding, x, 'fast')
  if (encoding === 'f32' || encoding === 'f16' || encoding === 'bf16') return { kind: 'dense', dtype: encoding, bytes }
  return { kind: 'ggml', dtype: encoding, bytes }
}

/** Builds a random model; weights N(0, std) with std ≈ 1/sqrt(fan-in) so logits stay O(1..10). */
export function randomModel(spec: RandomModelSpec): RandomModel {
  const dim = spec.dim ?? 64
  const nHeads = spec.nHeads ?? 4
  const headDim = dim / nHeads
  const config: ModelConfig = {
    architecture: spec.architecture ?? (spec.qkvBias ? 'qwen2' : 'llama'),
    dim,
    hiddenDim: spec.hiddenDim ?? 2 * dim,
    nLayers: spec.nLayers ?? 2,
    nHeads,
    nKvHeads: spec.nKvHeads ?? 2,
    headDim,
    vocabSize: spec.vocabSize ?? 97,
    contextLength: spec.contextLength ?? 64,
    normEps: 1e-5,
    ropeTheta: spec.ropeTheta ?? 10000,
    ropePairing: spec.ropePairing ?? 'adjacent',
    ropeDim: spec.ropeDim ?? headDim,
    ropeScaling: spec.ropeScaling ?? null,
    ropeFreqFactors: null,
    tiedEmbeddings: spec.tiedEmbeddings ?? false,
    qkvBias: spec.qkvBias ?? false
  }
  const groupSize = spec.groupSize ?? 32
  const tensor = (name: string, shape: number[], role: string, layer: number, std: number, mean = 0): Tensor => {
    const x = new Rng(deriveSeed(spec.seed, name)).fillNormal(new Float32Array(shape[0] * (shape[1] ?? 1)), std, mean)
    if (shape.length === 1) return { name, shape, data: encode(x, 'f32', groupSize) }
    const encoding = spec.encodingFor?.(role, layer) ?? spec.encoding ?? 'f32'
    return { name, shape, data: encode(x, encoding, groupSize) }
  }
  const c = config
  const qDim = c.nHeads * headDim
  const kvDim = c.nKvHeads * headDim
  const layers: LayerWeights[] = []
  for (let l = 0; l < c.nLayers; l++) {
    const p = `layer${l}`
    layers.push({
      attnNorm: tensor(`${p}.attn_norm`, [dim], 'attnNorm', l, 0.1, 1),
      wq: tensor(`${p}.wq`, [qDim, dim], 'wq', l, 1 / Math.sqrt(dim)),
      wk: tensor(`${p}.wk`, [kvDim, dim], 'wk', l, 1 / Math.sqrt(dim)),
      wv: tensor(`${p}.wv`, [kvDim, dim], 'wv', l, 1 / Math.sqrt(dim)),
      wo: tensor(`${p}.wo`, [dim, qDim], 'wo', l, 1 / Math.sqrt(qDim)),
      bq: c.qkvBias ? tensor(`${p}.bq`, [qDim], 'bq', l, 0.5) : null,
      bk: c.qkvBias ? tensor(`${p}.bk`, [kvDim], 'bk', l, 0.5) : null,
      bv: c.qkvBias ? tensor(`${p}.bv`, [kvDim], 'bv', l, 0.5) : null,
      ffnNorm: tensor(`${p}.ffn_norm`, [dim], 'ffnNorm', l, 0.1, 1),
      wGate: tensor(`${p}.w_gate`, [c.hiddenDim, dim], 'wGate', l, 1 / Math.sqrt(dim)),
      wUp: tensor(`${p}.w_up`, [c.hiddenDim, dim], 'wUp', l, 1 / Math.sqrt(dim)),
      wDown: tensor(`${p}.w_down`, [dim, c.hiddenDim], 'wDown', l, 1 / Math.sqrt(c.hiddenDim))
    })
  }
  const tokenEmbedding = tensor('token_embedding', [c.vocabSize, dim], 'tokenEmbedding', -1, 1)
  const output = c.tiedEmbeddings ? tokenEmbedding : tensor('output', [c.vocabSize, dim], 'output', -1, 1 / Math.sqrt(dim) * 3)
  return { config, weights: { tokenEmbedding, layers, finalNorm: tensor('final_norm', [dim], 'finalNorm', -1, 0.1, 1), output } }
}
