/**
 * @file llama2.c checkpoints: legacy "version 0" fp32 (28-byte header), version 1 fp32 and version 2
 * Q8_0 (256-byte headers, magic "ak42"). Unlike run.c, every header field is checked and the file size
 * must equal exactly what the header implies before any weight view is made.
 */
import { closeSync, readdirSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { BinaryReader } from './binary-reader'
import { ModelFormatError } from './errors'
import { openRegularFile, readPrefix } from './file-read'
import { readWeights } from './file-weights'
import { MAX_LLAMA2C_VOCAB, loadLlama2cTokenizer } from './tokenizer/llama2c-tokenizer'
import type { Tokenizer } from './tokenizer/types'
import type { LoadOptions, LoadedModel, ModelConfig } from './types'
import type { LayerSources, TensorSource, WeightLayout } from './weight-layout'

// Limits on header fields, generous for any llama2.c export (Llama 2 70B: dim 8192, hidden 28672, 80 layers).
/** Largest residual width. */
export const MAX_LLAMA2C_DIM = 1 << 16
/** Largest FFN width. */
export const MAX_LLAMA2C_HIDDEN_DIM = 1 << 18
/** Most transformer blocks. */
export const MAX_LLAMA2C_LAYERS = 1024
/** Most attention heads (query or key/value). */
export const MAX_LLAMA2C_HEADS = 1024
/** Longest context (positions). */
export const MAX_LLAMA2C_SEQ_LEN = 1 << 20
/** Largest Q8_0 group (export.py uses 64, backing off to a divisor of dim). */
export const MAX_LLAMA2C_GROUP_SIZE = 1 << 16

/** "ak42" as a little-endian uint32: the version-1/2 magic. */
export const LLAMA2C_MAGIC = 0x616b3432
const LEGACY_HEADER_BYTES = 28
const VERSIONED_HEADER_BYTES = 256
const F32_BYTES = 4

interface Header {
  readonly version: 0 | 1 | 2
  readonly dim: number
  readonly hiddenDim: number
  readonly nLayers: number
  readonly nHeads: number
  readonly nKvHeads: number
  readonly vocabSize: number
  readonly seqLen: number
  readonly shared: boolean
  /** Q8_0 group size (version 2), else 0 */
  readonly groupSize: number
  readonly headerBytes: number
}

function readHeader(r: BinaryReader): Header {
  const first = r.u32('magic or dim')
  const versioned = first === LLAMA2C_MAGIC
  let version: 0 | 1 | 2 = 0
  if (versioned) {
    const v = r.i32('version')
    if (v !== 1 && v !== 2) r.fail(`version ${v} is not supported (supported: legacy 0, 1 fp32, 2 Q8_0)`, 4)
    version = v
  } else {
    r.offset = 0
  }
  const field = (name: string, max: number, allowNegative = false): number => {
    const at = r.offset
    const v = r.i32(name)
    const abs = allowNegative ? Math.abs(v) : v
    if (abs <= 0 || abs > max) r.fail(`${name} is ${v}, outside 1..${max}`, at)
    return v
  }
  const dim = field('dim', MAX_LLAMA2C_DIM)
  const hiddenDim = field('hidden_dim', MAX_LLAMA2C_HIDDEN_DIM)
  const nLayers = field('n_layers', MAX_LLAMA2C_LAYERS)
  const nHeads = field('n_heads', MAX_LLAMA2C_HEADS)
  const nKvHeads = field('n_kv_heads', MAX_LLAMA2C_HEADS)
  // Legacy files mark an unshared classifier with a negative vocab_size.
  const rawVocab = field('vocab_size', MAX_LLAMA2C_VOCAB, !versioned)
  const seqLen = field('seq_len', MAX_LLAMA2C_SEQ_LEN)
  let shared = rawVocab > 0
  let groupSize = 0
  if (versioned) {
    const at = r.offset
    const flag = r.u8('shared_classifier')
    if (flag > 1) r.fail(`shared_classifier is ${flag}, expected 0 or 1`, at)
    shared = flag === 1
    if (version === 2) groupSize = field('group_size', MAX_LLAMA2C_GROUP_SIZE)
  }
  if (dim % nHeads !== 0) r.fail(`dim ${dim} is not divisible by n_heads ${nHeads}`, 0)
  if (nKvHeads > nHeads || nHeads % nKvHeads !== 0) r.fail(`n_kv_heads ${nKvHeads} does not divide n_heads ${nHeads}`, 0)
  if ((dim / nHeads) % 2 !== 0) r.fail(`head size ${dim / nHeads} is odd; RoPE rotates pairs`, 0)
  const headerBytes = versioned ? VERSIONED_HEADER_BYTES : LEGACY_HEADER_BYTES
  const vocabSize = Math.abs(rawVocab)
  return { version, dim, hiddenDim, nLayers, nHeads, nKvHeads, vocabSize, seqLen, shared, groupSize, headerBytes }
}

/** Element counts of the stored blocks, in file order, for one header. */
function layout(h: Header): { f32Norms: number; matrices: { name: string; rows: number; cols: number; perLayer: boolean }[] } {
  const headDim = h.dim / h.nHeads
  const kvDim = h.nKvHeads * headDim
  return {
    f32Norms: (2 * h.nLayers + 1) * h.dim,
    matrices: [
      { name: 'tok_embeddings', rows: h.vocabSize, cols: h.dim, perLayer: false },
      { name: 'wq', rows: h.dim, cols: h.dim, perLayer: true },
      { name: 'wk', rows: kvDim, cols: h.dim, perLayer: true },
      { name: 'wv', rows: kvDim, cols: h.dim, perLayer: true },
      { name: 'wo', rows: h.dim, cols: h.dim, perLayer: true },
      { name: 'w1', rows: h.hiddenDim, cols: h.dim, perLayer: true },
      { name: 'w2', rows: h.dim, cols: h.hiddenDim, perLayer: true },
      { name: 'w3', rows: h.hiddenDim, cols: h.dim, perLayer: true },
      ...(h.shared ? [] : [{ name: 'output', rows: h.vocabSize, cols: h.dim, perLayer: false }])
    ]
  }
}

/** Total file size the header implies, in bytes. */
function expectedSizeBytes(h: Header): number {
  const { f32Norms, matrices } = layout(h)
  let elems = 0
  for (const m of matrices) elems += m.rows * m.cols * (m.perLayer ? h.nLayers : 1)
  if (h.version === 2) {
    return h.headerBytes + f32Norms * F32_BYTES + elems + (elems / h.groupSize) * F32_BYTES
  }
  // Legacy files also store the RoPE tables freq_cis_real/imag: 2 × (seq_len, head_size/2) floats.
  const rope = h.version === 0 ? h.seqLen * (h.dim / h.nHeads) : 0
  return h.headerBytes + (f32Norms + elems + rope) * F32_BYTES
}

function configOf(h: Header): ModelConfig {
  const headDim = h.dim / h.nHeads
  return {
    architecture: 'llama',
    dim: h.dim,
    hiddenDim: h.hiddenDim,
    nLayers: h.nLayers,
    nHeads: h.nHeads,
    nKvHeads: h.nKvHeads,
    headDim,
    vocabSize: h.vocabSize,
    contextLength: h.seqLen,
    normEps: 1e-5,
    ropeTheta: 10000,
    ropePairing: 'adjacent',
    ropeDim: headDim,
    ropeScaling: null,
    ropeFreqFactors: null,
    tiedEmbeddings: h.shared,
    qkvBias: false
  }
}

/** Hands out consecutive tensors from the weight bytes (views, no copies, except unaligned Q8 scales). */
/** Lays tensors out one after another from `start`, in file order: f32 tensors, or Q8_0 int8 values then their scales. */
function layoutCursor(start: number, groupSize: number) {
  let offset = start
  const f32 = (name: string, shape: number[]): TensorSource => {
    const byteLength = shape.reduce((a, b) => a * b, 1) * F32_BYTES
    const s: TensorSource = { name, shape, encoding: { kind: 'dense', dtype: 'f32' }, file: 0, offset, byteLength }
    offset += byteLength
    return s
  }
  const q8 = (name: string, shape: number[]): TensorSource => {
    const n = shape[0] * shape[1]
    const values = offset
    const scalesOffset = values + n
    offset = scalesOffset + (n / groupSize) * F32_BYTES
    return { name, shape, encoding: { kind: 'int8-groups', groupSize, scalesOffset }, file: 0, offset: values, byteLength: n }
  }
  return { f32, q8, skip: (n: number): void => void (offset += n), get offset(): number { return offset } }
}

/** Where every weight lies in a checkpoint of `sizeBytes` bytes with header `h` (the file is this one). */
function weightLayout(h: Header, path: string, sizeBytes: number): WeightLayout {
  const cur = layoutCursor(h.headerBytes, h.groupSize)
  const { matrices } = layout(h)
  const L = h.nLayers
  const perLayer = (name: string, shape: number[], take: (n: string, s: number[]) => TensorSource): TensorSource[] =>
    Array.from({ length: L }, (_, l) => take(`layers.${l}.${name}`, shape))
  const shapeOf = (name: string): number[] => {
    const m = matrices.find((x) => x.name === name)
    if (!m) throw new Error(`internal: no matrix ${name}`)
    return [m.rows, m.cols]
  }
  const mat = h.version === 2 ? cur.q8 : cur.f32
  const norms = (name: string): TensorSource[] => perLayer(name, [h.dim], cur.f32)
  // Legacy order: embedding, attention norms, wq..wo, ffn norms, w1..w3, final norm, RoPE tables.
  // Versions 1/2: all norms first (f32 even in Q8_0 files), then embedding and the matrices.
  const legacy = h.version === 0
  const early = legacy ? null : { attnNorm: norms('attention_norm.weight'), ffnNorm: norms('ffn_norm.weight'), finalNorm: cur.f32('norm.weight', [h.dim]) }
  const embedding = mat('tok_embeddings.weight', shapeOf('tok_embeddings'))
  const attnNorm = early ? early.attnNorm : norms('attention_norm.weight')
  const wq = perLayer('attention.wq.weight', shapeOf('wq'), mat)
  const wk = perLayer('attention.wk.weight', shapeOf('wk'), mat)
  const wv = perLayer('attention.wv.weight', shapeOf('wv'), mat)
  const wo = perLayer('attention.wo.weight', shapeOf('wo'), mat)
  const ffnNorm = early ? early.ffnNorm : norms('ffn_norm.weight')
  const w1 = perLayer('feed_forward.w1.weight', shapeOf('w1'), mat)
  const w2 = perLayer('feed_forward.w2.weight', shapeOf('w2'), mat)
  const w3 = perLayer('feed_forward.w3.weight', shapeOf('w3'), mat)
  const finalNorm = early ? early.finalNorm : cur.f32('norm.weight', [h.dim])
  // freq_cis_real + freq_cis_imag: (seq_len, head_size/2) each; RoPE is recomputed instead.
  if (legacy) cur.skip(h.seqLen * (h.dim / h.nHeads) * F32_BYTES)
  const output = h.shared ? null : mat('output.weight', shapeOf('output'))
  if (cur.offset !== sizeBytes) throw new Error(`internal: weights end at ${cur.offset}, file has ${sizeBytes}`)
  const layers: LayerSources[] = Array.from({ length: L }, (_, l) => ({
    attnNorm: attnNorm[l],
    wq: wq[l],
    wk: wk[l],
    wv: wv[l],
    wo: wo[l],
    bq: null,
    bk: null,
    bv: null,
    ffnNorm: ffnNorm[l],
    wGate: w1[l],
    wUp: w3[l],
    wDown: w2[l]
  }))
  return { files: [{ path, sizeBytes }], tokenEmbedding: embedding, layers, finalNorm, output }
}

/** The tokenizer from `tokenizerPath`, else the first tok*.bin beside the model holding exactly vocabSize tokens. */
function findTokenizer(modelPath: string, vocabSize: number, tokenizerPath: string | undefined): Tokenizer {
  if (tokenizerPath !== undefined) return loadLlama2cTokenizer(tokenizerPath, vocabSize)
  const folder = dirname(modelPath)
  const candidates = readdirSync(folder)
    .filter((f) => /^tok.*\.bin$/i.test(f) && f !== basename(modelPath))
    .sort()
    .map((f) => join(folder, f))
  const tried: string[] = []
  for (const candidate of candidates) {
    try {
      return loadLlama2cTokenizer(candidate, vocabSize)
    } catch (e) {
      if (!(e instanceof ModelFormatError)) throw e
      tried.push(e.message)
    }
  }
  const detail = tried.length > 0 ? `tried: ${tried.join('; ')}` : `no tok*.bin in ${folder}`
  throw new ModelFormatError(modelPath, `no tokenizer with ${vocabSize} tokens found (${detail}); pass tokenizerPath`)
}

/** Loads a llama2.c checkpoint (any version) and its tokenizer. */
export async function loadLlama2cModel(path: string, options: LoadOptions = {}): Promise<LoadedModel> {
  const withWeights = options.weights ?? true
  const file = openRegularFile(path, 'model file')
  let bytes: Uint8Array
  let sizeBytes: number
  try {
    // the header only: the weights are read from the file when used (file-weights.ts)
    bytes = readPrefix(file, VERSIONED_HEADER_BYTES)
    sizeBytes = file.sizeBytes
  } finally {
    closeSync(file.fd)
  }
  const header = readHeader(new BinaryReader(bytes, path))
  if (header.version === 2) {
    const { matrices } = layout(header)
    for (const m of matrices) {
      if ((m.rows * m.cols) % header.groupSize !== 0) {
        throw new ModelFormatError(path, `${m.name} has ${m.rows * m.cols} values, not a multiple of group_size ${header.groupSize}`)
      }
    }
  }
  const expected = expectedSizeBytes(header)
  if (expected !== sizeBytes) {
    throw new ModelFormatError(path, `file is ${sizeBytes} bytes but the header implies ${expected} (truncated, padded or wrong header)`)
  }
  const tokenizer = findTokenizer(path, header.vocabSize, options.tokenizerPath)
  const quantized = header.version === 2
  const weightsAt = weightLayout(header, path, sizeBytes)
  return {
    path,
    format: 'llama2c',
    config: configOf(header),
    weights: withWeights ? readWeights(weightsAt) : null,
    layout: weightsAt,
    tokenizer,
    chatTemplate: null,
    quantization: quantized ? `Q8_0 (int8 groups of ${header.groupSize}, f32 norms)` : 'F32',
    tensorTypes: quantized ? ['f32', 'int8-groups'] : ['f32'],
    // run.c stops when the model emits BOS again; EOS ends a story too.
    stopTokenIds: [1, 2],
    promptStyle: 'llama2c'
  }
}
