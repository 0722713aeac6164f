/**
 * @file What the roofline shares need from a GGUF file, read from its header with the engine's own
 * parser: the bytes of weights one decode step reads, the multiply-accumulates per token, and the
 * token ids a prompt may use (normal tokens only: no control, unknown or byte tokens).
 */
import { open } from 'node:fs/promises'
import { BinaryReader } from '../main/engine/model/binary-reader'
import { GgufNeedMoreBytes, parseGguf, type GgufHeader, type GgufValue } from '../main/engine/model/gguf'
import { Rng } from '../test/fixtures/rng'

/** First read of the header; grown on demand (a 32000-token vocabulary needs about 1 MiB). */
const HEADER_PROBE_BYTES = 1 << 20
/** Largest header we read into memory (the synthetic and real vocabularies are far smaller). */
const MAX_HEADER_BYTES = 256 << 20
/** GGUF token_type of an ordinary token (1 normal, 2 unknown, 3 control, 6 byte). */
const TOKEN_TYPE_NORMAL = 1

/** Per-token costs of one model. */
export interface GgufSummary {
  readonly fileSizeBytes: number
  readonly nLayers: number
  readonly dim: number
  readonly nHeads: number
  readonly nKvHeads: number
  readonly headDim: number
  readonly vocabSize: number
  /** bytes of every 2-D matrix a decode step reads: all layer matrices plus the output head (not the embedding table, of which one row is read) */
  readonly weightBytesPerToken: number
  /** elements of the layer matrices (q, k, v, o, gate, up, down over all layers): the per-token matmul parameters */
  readonly layerMatrixParams: number
  /** elements of the output head (the lm head runs once per forward, for the last position) */
  readonly headParams: number
  /** token ids whose GGUF token_type is normal, ascending */
  readonly normalTokenIds: readonly number[]
}

/** The header of the GGUF file at `path`, read in growing prefixes (never the tensor data). */
export async function readGgufHeader(path: string): Promise<GgufHeader> {
  const fh = await open(path, 'r')
  try {
    const sizeBytes = (await fh.stat()).size
    let length = Math.min(sizeBytes, HEADER_PROBE_BYTES)
    for (;;) {
      const bytes = new Uint8Array(length)
      await fh.read(bytes, 0, length, 0)
      try {
        return parseGguf(new BinaryReader(bytes, path), sizeBytes)
      } catch (e) {
        if (!(e instanceof GgufNeedMoreBytes)) throw e
        const next = Math.min(sizeBytes, Math.max(2 * length, e.neededBytes))
        if (next > MAX_HEADER_BYTES) throw new Error(`${path}: GGUF header larger than ${MAX_HEADER_BYTES} bytes`)
        length = next
      }
    }
  } finally {
    await fh.close()
  }
}

function metaNumber(header: GgufHeader, key: string): number {
  const v: GgufValue | undefined = header.metadata.get(key)
  if (!v || typeof v.value !== 'number') throw new Error(`${header.file}: metadata ${key} missing or not a number`)
  return v.value
}

/** Reads the header of `path` and sums what one token costs. */
export async function summarizeGguf(path: string): Promise<GgufSummary> {
  const header = await readGgufHeader(path)
  const archValue = header.metadata.get('general.architecture')
  if (!archValue || archValue.type !== 'string') throw new Error(`${path}: general.architecture missing`)
  const arch = archValue.value
  const dim = metaNumber(header, `${arch}.embedding_length`)
  const nHeads = metaNumber(header, `${arch}.attention.head_count`)
  const nLayers = metaNumber(header, `${arch}.block_count`)
  const nKvHeads = header.metadata.has(`${arch}.attention.head_count_kv`) ? metaNumber(header, `${arch}.attention.head_count_kv`) : nHeads

  let weightBytesPerToken = 0
  let layerMatrixParams = 0
  let headParams = 0
  let embedding: { params: number; bytes: number } | null = null
  for (const t of header.tensors) {
    if (t.dims.length !== 2) continue // norms and biases: negligible bytes, no matmul
    if (t.name === 'token_embd.weight') {
      embedding = { params: t.elementCount, bytes: t.sizeBytes }
      continue
    }
    weightBytesPerToken += t.sizeBytes
    if (t.name === 'output.weight') headParams += t.elementCount
    else layerMatrixParams += t.elementCount
  }
  if (!embedding) throw new Error(`${path}: no token_embd.weight`)
  // tied embeddings: the head reads the whole embedding table
  if (headParams === 0) {
    headParams = embedding.params
    weightBytesPerToken += embedding.bytes
  }

  const types = header.metadata.get('tokenizer.ggml.token_type')
  const tokens = header.metadata.get('tokenizer.ggml.tokens')
  if (!tokens || tokens.type !== 'array') throw new Error(`${path}: tokenizer.ggml.tokens missing`)
  const vocabSize = tokens.value.values.length
  const normalTokenIds: number[] = []
  if (types && types.type === 'array' && types.value.itemType !== 'string' && types.value.itemType !== 'array') {
    types.value.values.forEach((t, id) => {
      if (Number(t) === TOKEN_TYPE_NORMAL) normalTokenIds.push(id)
    })
  } else {
    for (let id = 3; id < vocabSize; id++) normalTokenIds.push(id) // no types: skip the usual unk/bos/eos
  }
  if (normalTokenIds.length === 0) throw new Error(`${path}: no normal tokens to build a prompt from`)
  return {
    fileSizeBytes: header.fileSizeBytes,
    nLayers,
    dim,
    nHeads,
    nKvHeads,
    headDim: dim / nHeads,
    vocabSize,
    weightBytesPerToken,
    layerMatrixParams,
    headParams,
    normalTokenIds
  }
}

/**
 * Useful FLOPs of a causal forward of `tokens` new positions after `past` cached ones: 2 per
 * multiply-accumulate over the layer matrices for every token, the head once (last position only),
 * and attention (QKᵀ and A·V: 4 · dim per query–key pair, over the keys each query may see).
 */
export function forwardFlops(s: GgufSummary, tokens: number, past = 0): number {
  // Σ_{i=0}^{tokens-1} (past + i + 1) keys
  const pairs = tokens * past + (tokens * (tokens + 1)) / 2
  return 2 * s.layerMatrixParams * tokens + 2 * s.headParams + 4 * s.dim * s.nLayers * pairs
}

/** `n` prompt token ids drawn from the normal tokens with a fixed seed (the same for every peer). */
export function promptTokens(s: GgufSummary, n: number, seed: number): number[] {
  const rng = new Rng(seed)
  return Array.from({ length: n }, () => s.normalTokenIds[rng.int(s.normalTokenIds.length)])
}
