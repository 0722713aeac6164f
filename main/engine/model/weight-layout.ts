/**
 * @file Where a model's weights lie in its files, as plain data: what a header parse produces, so the
 * thread that runs the model can read the weights without parsing the header again (the model worker gets
 * the layout from the thread that parsed it). `readWeights` (file-weights.ts) makes each source a tensor
 * that reads its bytes on use.
 */
import { FieldReader, readInteger, type Fail } from '../../common/reader'
import { MAX_FILE_OFFSET } from './file-read'
import { MAX_TENSOR_NDIMS } from './safetensors'
import type { BlockDType, DenseDType, LayerWeights, ModelWeights, Tensor } from './types'

/** How a tensor's bytes encode its values. */
export type TensorEncoding =
  | { readonly kind: 'dense'; readonly dtype: DenseDType }
  | { readonly kind: 'ggml'; readonly dtype: BlockDType }
  /** llama2.c Q8_0: `byteLength` int8 values at `offset`, then one f32 scale per group at `scalesOffset` */
  | { readonly kind: 'int8-groups'; readonly groupSize: number; readonly scalesOffset: number }

/** One tensor's place: which file, which bytes, and how to read them. */
export interface TensorSource {
  readonly name: string
  /** outer-first, as Tensor.shape */
  readonly shape: readonly number[]
  readonly encoding: TensorEncoding
  /** index into WeightLayout.files */
  readonly file: number
  readonly offset: number
  readonly byteLength: number
}

/** A layer's tensors, as LayerWeights names them (biases null when the model has none). */
export type LayerSources = { readonly [K in keyof LayerWeights]: LayerWeights[K] extends Tensor ? TensorSource : TensorSource | null }

/** Every weight of a model by its role, and the files they are in. */
export interface WeightLayout {
  /** each file with the size it had when the header was parsed */
  readonly files: readonly { readonly path: string; readonly sizeBytes: number }[]
  readonly tokenEmbedding: TensorSource
  readonly layers: readonly LayerSources[]
  readonly finalNorm: TensorSource
  /** null: the output projection is the token embedding (tied) */
  readonly output: TensorSource | null
}

/** Most files one model's weights span (sharded Hugging Face folders; a 405B model has a few hundred). */
export const MAX_WEIGHT_FILES = 4096
/** Most layers a layout may list. */
export const MAX_LAYOUT_LAYERS = 4096
/** Longest file path accepted in a layout. */
const MAX_PATH_LENGTH = 4096
/** Longest tensor name. */
const MAX_TENSOR_NAME_LENGTH = 1024

const LAYER_KEYS = ['attnNorm', 'wq', 'wk', 'wv', 'wo', 'bq', 'bk', 'bv', 'ffnNorm', 'wGate', 'wUp', 'wDown'] as const

/** The tensors of a layout in a fixed order (embedding, layers, final norm, untied output). */
export function layoutSources(layout: WeightLayout): TensorSource[] {
  const out = [layout.tokenEmbedding]
  for (const l of layout.layers) for (const k of LAYER_KEYS) if (l[k] !== null) out.push(l[k])
  out.push(layout.finalNorm)
  if (layout.output !== null) out.push(layout.output)
  return out
}

/** ModelWeights with every source of `layout` made a Tensor by `tensor`. */
export function weightsOfLayout(layout: WeightLayout, tensor: (s: TensorSource) => Tensor): ModelWeights {
  const optional = (s: TensorSource | null): Tensor | null => (s === null ? null : tensor(s))
  const tokenEmbedding = tensor(layout.tokenEmbedding)
  const layers: LayerWeights[] = layout.layers.map((l) => ({
    attnNorm: tensor(l.attnNorm),
    wq: tensor(l.wq),
    wk: tensor(l.wk),
    wv: tensor(l.wv),
    wo: tensor(l.wo),
    bq: optional(l.bq),
    bk: optional(l.bk),
    bv: optional(l.bv),
    ffnNorm: tensor(l.ffnNorm),
    wGate: tensor(l.wGate),
    wUp: tensor(l.wUp),
    wDown: tensor(l.wDown)
  }))
  return { tokenEmbedding, layers, finalNorm: tensor(layout.finalNorm), output: layout.output === null ? tokenEmbedding : tensor(layout.output) }
}

function readSource(fail: Fail, path: string, v: unknown, files: number): TensorSource {
  const r = new FieldReader(fail, path, v)
  const e = r.record('encoding')
  const kind = e.choice('kind', ['dense', 'ggml', 'int8-groups'])
  const encoding: TensorEncoding =
    kind === 'dense'
      ? { kind, dtype: e.choice('dtype', ['f32', 'f16', 'bf16']) }
      : kind === 'ggml'
        ? { kind, dtype: e.choice('dtype', ['q8_0', 'q4_0', 'q4_k', 'q6_k']) }
        : { kind, groupSize: e.int('groupSize', 1, MAX_FILE_OFFSET), scalesOffset: e.int('scalesOffset', 0, MAX_FILE_OFFSET) }
  return {
    name: r.string('name', MAX_TENSOR_NAME_LENGTH),
    shape: r.list('shape', MAX_TENSOR_NDIMS, 1).map((d, i) => readInteger(fail, `${r.at('shape')}[${i}]`, d, 0, MAX_FILE_OFFSET)),
    encoding,
    file: r.int('file', 0, files - 1),
    offset: r.int('offset', 0, MAX_FILE_OFFSET),
    byteLength: r.int('byteLength', 0, MAX_FILE_OFFSET)
  }
}

/** Reads a layout that crossed a boundary (the model worker's init); problems go to `fail`. */
export function readWeightLayout(fail: Fail, path: string, v: unknown): WeightLayout {
  const r = new FieldReader(fail, path, v)
  const files = r.records('files', MAX_WEIGHT_FILES, (f) => ({ path: f.string('path', MAX_PATH_LENGTH), sizeBytes: f.int('sizeBytes', 0, Number.MAX_SAFE_INTEGER) }))
  const source = (p: string, value: unknown): TensorSource => readSource(fail, p, value, files.length)
  const layers = r.records('layers', MAX_LAYOUT_LAYERS, (l): LayerSources => {
    const get = (k: (typeof LAYER_KEYS)[number]): TensorSource => source(l.at(k), l.raw(k))
    const opt = (k: 'bq' | 'bk' | 'bv'): TensorSource | null => (l.raw(k) === null ? null : get(k))
    return {
      attnNorm: get('attnNorm'),
      wq: get('wq'),
      wk: get('wk'),
      wv: get('wv'),
      wo: get('wo'),
      bq: opt('bq'),
      bk: opt('bk'),
      bv: opt('bv'),
      ffnNorm: get('ffnNorm'),
      wGate: get('wGate'),
      wUp: get('wUp'),
      wDown: get('wDown')
    }
  })
  return {
    files,
    tokenEmbedding: source(r.at('tokenEmbedding'), r.raw('tokenEmbedding')),
    layers,
    finalNorm: source(r.at('finalNorm'), r.raw('finalNorm')),
    output: r.raw('output') === null ? null : source(r.at('output'), r.raw('output'))
  }
}
