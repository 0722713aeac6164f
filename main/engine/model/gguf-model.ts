/**
 * @file Loads a GGUF `llama` or `qwen2` model: config from `{arch}.*` metadata, every tensor checked
 * against that config, tokenizer from tokenizer.ggml.*. Only the header is read (progressively), so opening
 * a large file is instant; the weights are read from the file when used (file-weights.ts).
 */
import type { FileHandle } from 'node:fs/promises'
import { BinaryReader } from './binary-reader'
import { ModelFormatError } from './errors'
import { openRegularFileHandle } from './file-read'
import { llamaFileTypeName } from './ggml'
import { GgufNeedMoreBytes, parseGguf, type GgufHeader, type GgufTensorInfo } from './gguf'
import { GgufMetadata } from './gguf-metadata'
import { buildGgufTokenizer, readGgufVocab } from './gguf-vocab'
import { tensorToFloat32 } from './tensor'
import type { Architecture, DenseDType, LoadedModel, LoadOptions, ModelConfig, Tensor } from './types'
import { readWeights } from './file-weights'
import { type LayerSources, type TensorSource, type WeightLayout } from './weight-layout'

/** general.architecture values we run, and their RoPE pairing (llama's converter permutes Q/K rows). */
const ARCHITECTURES: Readonly<Record<Architecture, ModelConfig['ropePairing']>> = { llama: 'adjacent', qwen2: 'rotate-half' }

/** Residual / FFN width. The largest open models are ~30k wide; this stops absurd allocations. */
const MAX_WIDTH = 1 << 20
/** Transformer blocks. The deepest open models have ~130. */
const MAX_LAYERS = 4096
/** Attention heads. */
const MAX_HEADS = 1 << 14
/** Positions. Llama 4 advertises 10M; 2^24 covers it. */
const MAX_CONTEXT_LENGTH = 1 << 24
/** First read of a header-only load; doubled until the header fits (big vocabularies take a few MiB). */
const HEADER_PROBE_BYTES = 1 << 20
/** Read size when loading the whole file, so no single read() asks the OS for gigabytes. */
const READ_CHUNK_BYTES = 64 << 20

/** Loads a GGUF model (weights and tokenizer, or with `weights: false` only config and tokenizer). */
export async function loadGgufModel(path: string, options: LoadOptions = {}): Promise<LoadedModel> {
  const { handle: fh, stats } = await openRegularFileHandle(path, 'model file')
  try {
    const sizeBytes = stats.size
    const header = await readHeader(fh, path, sizeBytes)
    const tensorBytes = async (t: GgufTensorInfo): Promise<Uint8Array> => {
      const buf = new Uint8Array(t.sizeBytes)
      await readRange(fh, buf, 0, t.sizeBytes, t.absoluteOffset)
      return buf
    }
    const model = await buildModel(path, sizeBytes, header, tensorBytes)
    // the weights stay in the file until used (file-weights.ts): a model is never one buffer
    return options.weights === false ? model : { ...model, weights: readWeights(model.layout) }
  } finally {
    await fh.close()
  }
}

/** Fills bytes[from, to) from file positions [filePos + from, filePos + to). */
async function readRange(fh: FileHandle, bytes: Uint8Array, from: number, to: number, filePos = 0): Promise<void> {
  let pos = from
  while (pos < to) {
    const { bytesRead } = await fh.read(bytes, pos, Math.min(READ_CHUNK_BYTES, to - pos), filePos + pos)
    if (bytesRead === 0) throw new Error(`file shrank while reading (at byte ${filePos + pos})`)
    pos += bytesRead
  }
}

/** Parses the header from a growing prefix of the file. */
async function readHeader(fh: FileHandle, path: string, sizeBytes: number): Promise<GgufHeader> {
  let bytes = new Uint8Array(Math.min(sizeBytes, HEADER_PROBE_BYTES))
  await readRange(fh, bytes, 0, bytes.length)
  for (;;) {
    try {
      return parseGguf(new BinaryReader(bytes, path), sizeBytes)
    } catch (e) {
      if (!(e instanceof GgufNeedMoreBytes)) throw e
      const next = new Uint8Array(Math.min(sizeBytes, Math.max(bytes.length * 2, e.neededBytes)))
      next.set(bytes)
      await readRange(fh, next, bytes.length, next.length)
      bytes = next
    }
  }
}

/** The model described by a parsed header, without weights (the layout says where they are). */
async function buildModel(path: string, sizeBytes: number, header: GgufHeader, tensorBytes: (t: GgufTensorInfo) => Promise<Uint8Array>): Promise<LoadedModel> {
  const fail = (detail: string): never => {
    throw new ModelFormatError(path, detail)
  }
  const meta = new GgufMetadata(header)
  const archName = meta.string('general.architecture') ?? fail('general.architecture is missing')
  if (archName !== 'llama' && archName !== 'qwen2') {
    fail(`architecture "${archName}" is not supported; supported: ${Object.keys(ARCHITECTURES).join(', ')}`)
  }
  const arch: Architecture = archName === 'qwen2' ? 'qwen2' : 'llama'
  const byName = new Map(header.tensors.map((t) => [t.name, t]))
  const vocab = readGgufVocab(meta, path)

  const ropeFreqs = byName.get('rope_freqs.weight')
  const config = readConfig(meta, arch, path, byName, vocab.tokens.length)
  let ropeFreqFactors: number[] | null = null
  if (ropeFreqs) {
    expectShape(path, ropeFreqs, [config.ropeDim / 2])
    ropeFreqFactors = Array.from(tensorToFloat32(toTensor(ropeFreqs, await tensorBytes(ropeFreqs))))
    if (!ropeFreqFactors.every((f) => Number.isFinite(f) && f > 0)) fail('rope_freqs.weight holds a factor that is not a positive number')
  }
  const fullConfig: ModelConfig = { ...config, ropeFreqFactors }
  const layout = weightLayout(path, sizeBytes, fullConfig, byName)

  const tokenizer = buildGgufTokenizer(vocab, path)
  const stops = new Set<number>()
  for (const id of [vocab.eosId, vocab.eotId, ...tokenizer.extraStopIds]) if (id !== null) stops.add(id)

  const { quantization, tensorTypes } = describeQuantization(meta, header.tensors)
  return {
    path,
    format: 'gguf',
    config: fullConfig,
    weights: null,
    layout,
    tokenizer,
    chatTemplate: meta.string('tokenizer.chat_template'),
    quantization,
    tensorTypes,
    stopTokenIds: [...stops].sort((a, b) => a - b),
    promptStyle: 'tokenizer'
  }
}

function readConfig(
  meta: GgufMetadata,
  arch: Architecture,
  path: string,
  byName: ReadonlyMap<string, GgufTensorInfo>,
  vocabSize: number
): Omit<ModelConfig, 'ropeFreqFactors'> {
  const fail = (detail: string): never => {
    throw new ModelFormatError(path, detail)
  }
  const need = (key: string, max: number): number => meta.integer(`${arch}.${key}`, 1, max) ?? fail(`${arch}.${key} is missing`)
  const experts = meta.integer(`${arch}.expert_count`, 0, 2 ** 32 - 1)
  if (experts !== null && experts > 0) fail(`mixture-of-experts models (${arch}.expert_count = ${experts}) are not supported`)
  const dim = need('embedding_length', MAX_WIDTH)
  const hiddenDim = need('feed_forward_length', MAX_WIDTH)
  const nLayers = need('block_count', MAX_LAYERS)
  const nHeads = need('attention.head_count', MAX_HEADS)
  const nKvHeads = meta.integer(`${arch}.attention.head_count_kv`, 1, MAX_HEADS) ?? nHeads
  if (nHeads % nKvHeads !== 0) fail(`attention.head_count ${nHeads} is not a multiple of head_count_kv ${nKvHeads}`)
  const keyLength = meta.integer(`${arch}.attention.key_length`, 1, MAX_WIDTH)
  if (keyLength === null && dim % nHeads !== 0) fail(`embedding_length ${dim} is not a multiple of head_count ${nHeads}`)
  const headDim = keyLength ?? dim / nHeads
  const valueLength = meta.integer(`${arch}.attention.value_length`, 1, MAX_WIDTH)
  if (valueLength !== null && valueLength !== headDim) fail(`attention.value_length ${valueLength} differs from key_length ${headDim}`)
  const ropeDim = meta.integer(`${arch}.rope.dimension_count`, 1, MAX_WIDTH) ?? headDim
  if (ropeDim % 2 !== 0 || ropeDim > headDim) fail(`rope.dimension_count ${ropeDim} must be even and at most the head size ${headDim}`)
  const ropeTheta = meta.number(`${arch}.rope.freq_base`) ?? 10_000
  if (!(ropeTheta > 0)) fail(`rope.freq_base ${ropeTheta} is not positive`)
  const scalingType = meta.string(`${arch}.rope.scaling.type`)
  const scalingFactor = meta.number(`${arch}.rope.scaling.factor`)
  if (scalingType !== null && scalingType !== 'none' && scalingFactor !== null && scalingFactor !== 1) {
    fail(`rope scaling "${scalingType}" (factor ${scalingFactor}) is not supported`)
  }
  const normEps = meta.number(`${arch}.attention.layer_norm_rms_epsilon`) ?? fail(`${arch}.attention.layer_norm_rms_epsilon is missing`)
  if (!(normEps > 0 && normEps < 1)) fail(`attention.layer_norm_rms_epsilon ${normEps} is not in (0, 1)`)
  const contextLength = need('context_length', MAX_CONTEXT_LENGTH)
  return {
    architecture: arch,
    dim, hiddenDim, nLayers, nHeads, nKvHeads, headDim, vocabSize, contextLength, normEps, ropeTheta,
    ropePairing: ARCHITECTURES[arch],
    ropeDim,
    ropeScaling: null,
    tiedEmbeddings: !byName.has('output.weight'),
    qkvBias: byName.has('blk.0.attn_q.bias')
  }
}

/** Throws unless the tensor's outer-first shape is `shape`. */
function expectShape(path: string, t: GgufTensorInfo, shape: readonly number[]): void {
  const actual = [...t.dims].reverse()
  if (actual.length !== shape.length || actual.some((d, i) => d !== shape[i])) {
    throw new ModelFormatError(path, `tensor ${t.name} has shape [${actual.join(', ')}], expected [${shape.join(', ')}]`)
  }
}

/** Finds every tensor the config needs, checks its shape, and lays the weights out (one file: this one). */
function weightLayout(path: string, sizeBytes: number, c: ModelConfig, byName: ReadonlyMap<string, GgufTensorInfo>): WeightLayout {
  const get = (name: string, shape: readonly number[]): TensorSource => {
    const t = byName.get(name)
    if (!t) throw new ModelFormatError(path, `tensor ${name} is missing`)
    expectShape(path, t, shape)
    return sourceOf(t)
  }
  const optional = (name: string, shape: readonly number[], wanted: boolean): TensorSource | null => {
    if (!wanted) {
      if (byName.has(name)) throw new ModelFormatError(path, `tensor ${name} is present but blk.0 has no q/k/v biases`)
      return null
    }
    return get(name, shape)
  }
  for (const name of byName.keys()) {
    const m = /^blk\.(\d+)\./.exec(name)
    if (m && Number(m[1]) >= c.nLayers) throw new ModelFormatError(path, `tensor ${name} is beyond block_count ${c.nLayers}`)
  }
  const qDim = c.nHeads * c.headDim
  const kvDim = c.nKvHeads * c.headDim
  const layers: LayerSources[] = []
  for (let l = 0; l < c.nLayers; l++) {
    const p = `blk.${l}.`
    layers.push({
      attnNorm: get(`${p}attn_norm.weight`, [c.dim]),
      wq: get(`${p}attn_q.weight`, [qDim, c.dim]),
      wk: get(`${p}attn_k.weight`, [kvDim, c.dim]),
      wv: get(`${p}attn_v.weight`, [kvDim, c.dim]),
      wo: get(`${p}attn_output.weight`, [c.dim, qDim]),
      bq: optional(`${p}attn_q.bias`, [qDim], c.qkvBias),
      bk: optional(`${p}attn_k.bias`, [kvDim], c.qkvBias),
      bv: optional(`${p}attn_v.bias`, [kvDim], c.qkvBias),
      ffnNorm: get(`${p}ffn_norm.weight`, [c.dim]),
      wGate: get(`${p}ffn_gate.weight`, [c.hiddenDim, c.dim]),
      wUp: get(`${p}ffn_up.weight`, [c.hiddenDim, c.dim]),
      wDown: get(`${p}ffn_down.weight`, [c.dim, c.hiddenDim])
    })
  }
  return {
    files: [{ path, sizeBytes }],
    tokenEmbedding: get('token_embd.weight', [c.vocabSize, c.dim]),
    layers,
    finalNorm: get('output_norm.weight', [c.dim]),
    output: c.tiedEmbeddings ? null : get('output.weight', [c.vocabSize, c.dim])
  }
}

function isDense(e: string): e is DenseDType {
  return e === 'f32' || e === 'f16' || e === 'bf16'
}

/** Where a tensor lies in the file, and its encoding (shape outer-first). */
function sourceOf(t: GgufTensorInfo): TensorSource {
  const e = t.type.encoding
  return { name: t.name, shape: [...t.dims].reverse(), encoding: isDense(e) ? { kind: 'dense', dtype: e } : { kind: 'ggml', dtype: e }, file: 0, offset: t.absoluteOffset, byteLength: t.sizeBytes }
}

/** A Tensor viewing `bytes` (exactly the tensor's data) in its file encoding. */
function toTensor(t: GgufTensorInfo, bytes: Uint8Array): Tensor {
  const shape = [...t.dims].reverse()
  const e = t.type.encoding
  return isDense(e) ? { name: t.name, shape, data: { kind: 'dense', dtype: e, bytes } } : { name: t.name, shape, data: { kind: 'ggml', dtype: e, bytes } }
}

/** "Q4_K_M (q4_k, q6_k, f32)": file type name (or the dominant encoding), then encodings by bytes. */
function describeQuantization(meta: GgufMetadata, tensors: readonly GgufTensorInfo[]): { quantization: string; tensorTypes: string[] } {
  const bytesByType = new Map<string, number>()
  for (const t of tensors) bytesByType.set(t.type.encoding, (bytesByType.get(t.type.encoding) ?? 0) + t.sizeBytes)
  const byBytes = [...bytesByType.entries()].sort((a, b) => b[1] - a[1]).map(([e]) => e)
  // llama.cpp sets bit 10 (LLAMA_FTYPE_GUESSED) when it inferred the type
  const fileType = meta.integer('general.file_type', 0, 2 ** 32 - 1)
  const name = fileType !== null ? llamaFileTypeName(fileType & ~1024) : (byBytes[0] ?? 'f32').toUpperCase()
  return {
    quantization: byBytes.length <= 1 ? name : `${name} (${byBytes.join(', ')})`,
    tensorTypes: [...bytesByType.keys()].sort()
  }
}
