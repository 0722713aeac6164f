/**
 * @file Hugging Face model folders (llama / mistral / qwen2): config.json, model.safetensors (or shards
 * listed in model.safetensors.index.json), tokenizer.json + tokenizer_config.json, generation_config.json.
 * HF matrices are already [out, in]; HF Q/K weights expect rotate-half RoPE.
 */
import { isRecord, readInteger, readNumber, type Fail } from '../../common/reader'
import { existsSync, statSync } from 'node:fs'
import { basename, join } from 'node:path'
import { ModelFormatError } from './errors'
import { readSafetensorsHeader, type SafetensorsEntry } from './safetensors'
import { MAX_HF_VOCAB, loadHfTokenizer, readJsonFile } from './tokenizer/hf-tokenizer'
import type { Architecture, Llama3RopeScaling, LoadOptions, LoadedModel, ModelConfig } from './types'
import { readWeights } from './file-weights'
import { type LayerSources, type TensorSource, type WeightLayout } from './weight-layout'

/** Largest model.safetensors.index.json read. */
export const MAX_INDEX_JSON_BYTES = 64 * 1024 * 1024
/** Most shard files one model may list. */
export const MAX_SHARDS = 4096

const SINGLE_FILE = 'model.safetensors'
const INDEX_FILE = 'model.safetensors.index.json'

// Limits on config.json numbers, generous (Llama 3.1 405B: hidden 16384, intermediate 53248, 126 layers).
/** Largest hidden_size. */
export const MAX_HF_HIDDEN_SIZE = 1 << 16
/** Largest intermediate_size. */
export const MAX_HF_INTERMEDIATE_SIZE = 1 << 18
/** Most num_hidden_layers. */
export const MAX_HF_LAYERS = 1024
/** Most attention heads (query or key/value). */
export const MAX_HF_HEADS = 1024
/** Largest head_dim. */
export const MAX_HF_HEAD_DIM = 1024
/** Largest max_position_embeddings. */
export const MAX_HF_CONTEXT = 1 << 24
/** Largest config.json / generation_config.json read. */
export const MAX_HF_CONFIG_BYTES = 1024 * 1024

/** model_type / architectures[0] values we can run, and the family each maps to. */
const SUPPORTED: Readonly<Record<string, Architecture>> = {
  llama: 'llama',
  mistral: 'llama',
  qwen2: 'qwen2',
  LlamaForCausalLM: 'llama',
  MistralForCausalLM: 'llama',
  Qwen2ForCausalLM: 'qwen2'
}

/** Validated config.json: the model config plus the special ids it declares. */
interface HfConfig {
  readonly config: ModelConfig
  readonly bosId: number | null
  readonly eosIds: number[]
}

function readHfConfig(file: string): HfConfig {
  const json = readJsonFile(file, MAX_HF_CONFIG_BYTES, 'model config')
  if (!isRecord(json)) throw new ModelFormatError(file, 'top level must be a JSON object')
  const fail: (detail: string) => never = (detail) => {
    throw new ModelFormatError(file, detail)
  }
  const modelType = typeof json.model_type === 'string' ? json.model_type : null
  const arch0 = Array.isArray(json.architectures) && typeof json.architectures[0] === 'string' ? json.architectures[0] : null
  const key = modelType ?? arch0
  const architecture = key !== null && Object.hasOwn(SUPPORTED, key) ? SUPPORTED[key] : undefined
  if (!architecture) {
    fail(`model_type ${JSON.stringify(modelType)} / architectures ${JSON.stringify(arch0)} is not supported (supported: llama, mistral, qwen2)`)
  }
  const failAt: Fail = (path, detail) => fail(`${path}: ${detail}`)
  const int = (name: string, max: number, fallback?: number): number => readInteger(failAt, name, json[name] ?? fallback, 1, max)
  const positive = (name: string, fallback: number): number => readNumber(failAt, name, json[name] ?? fallback, Number.MIN_VALUE, Infinity)
  const dim = int('hidden_size', MAX_HF_HIDDEN_SIZE)
  const nHeads = int('num_attention_heads', MAX_HF_HEADS)
  const nKvHeads = int('num_key_value_heads', MAX_HF_HEADS, nHeads)
  if (nHeads % nKvHeads !== 0) fail(`num_key_value_heads ${nKvHeads} does not divide num_attention_heads ${nHeads}`)
  if (json.head_dim === undefined || json.head_dim === null) {
    if (dim % nHeads !== 0) fail(`hidden_size ${dim} is not divisible by num_attention_heads ${nHeads} (and no head_dim)`)
  }
  const headDim = int('head_dim', MAX_HF_HEAD_DIM, dim / nHeads)
  if (headDim % 2 !== 0) fail(`head_dim ${headDim} is odd; RoPE rotates pairs`)
  if (json.hidden_act !== undefined && json.hidden_act !== 'silu') fail(`hidden_act ${JSON.stringify(json.hidden_act)} is not supported (only silu)`)
  if (json.mlp_bias === true) fail('mlp_bias is not supported')
  if (architecture === 'llama' && json.attention_bias === true) fail('attention_bias is not supported for llama models')
  const tie = json.tie_word_embeddings ?? false
  if (typeof tie !== 'boolean') fail('tie_word_embeddings must be a boolean')
  const ids = (field: string): number[] => {
    const v = json[field]
    if (v === undefined || v === null) return []
    const list: readonly unknown[] = Array.isArray(v) ? v : [v]
    return list.map((x) => (typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 ? x : fail(`${field} must be a token id or a list of ids`)))
  }
  const config: ModelConfig = {
    architecture,
    dim,
    hiddenDim: int('intermediate_size', MAX_HF_INTERMEDIATE_SIZE),
    nLayers: int('num_hidden_layers', MAX_HF_LAYERS),
    nHeads,
    nKvHeads,
    headDim,
    vocabSize: int('vocab_size', MAX_HF_VOCAB),
    contextLength: Math.min(int('max_position_embeddings', MAX_HF_CONTEXT), slidingWindow(json, architecture, fail)),
    // HF LlamaConfig defaults for the two optional floats.
    normEps: positive('rms_norm_eps', 1e-6),
    ropeTheta: positive('rope_theta', 10000),
    ropePairing: 'rotate-half',
    ropeDim: headDim,
    ropeScaling: ropeScaling(json.rope_scaling, fail),
    ropeFreqFactors: null,
    tiedEmbeddings: tie === true,
    qkvBias: architecture === 'qwen2'
  }
  return { config, bosId: ids('bos_token_id')[0] ?? null, eosIds: ids('eos_token_id') }
}

/**
 * Mistral (and Qwen2 with use_sliding_window) attend to at most `sliding_window` positions. Within that
 * many tokens sliding and full attention agree, so the usable context is capped there instead.
 */
function slidingWindow(json: { readonly [key: string]: unknown }, architecture: Architecture, fail: (detail: string) => never): number {
  const w = json.sliding_window
  const active = architecture === 'qwen2' ? json.use_sliding_window === true : json.model_type === 'mistral' || w !== undefined
  if (!active || w === undefined || w === null) return Number.POSITIVE_INFINITY
  return typeof w === 'number' && Number.isSafeInteger(w) && w > 0 ? w : fail('sliding_window must be a positive integer or null')
}

/** rope_scaling: null/absent/"default" -> none; "llama3" -> its four parameters; anything else is refused. */
function ropeScaling(value: unknown, fail: (detail: string) => never): Llama3RopeScaling | null {
  if (value === undefined || value === null) return null
  if (!isRecord(value)) return fail('rope_scaling must be an object or null')
  const type = value.rope_type ?? value.type
  if (type === 'default') return null
  if (type !== 'llama3') return fail(`rope_scaling type ${JSON.stringify(type)} is not supported (supported: llama3)`)
  const num = (name: string): number => {
    const v = value[name]
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fail(`rope_scaling.${name} must be a positive number`)
  }
  const scaling: Llama3RopeScaling = {
    type: 'llama3',
    factor: num('factor'),
    lowFreqFactor: num('low_freq_factor'),
    highFreqFactor: num('high_freq_factor'),
    originalContextLength: num('original_max_position_embeddings')
  }
  if (scaling.highFreqFactor <= scaling.lowFreqFactor) fail('rope_scaling.high_freq_factor must exceed low_freq_factor')
  return scaling
}

/** Tensor name -> the shard file holding it. */
function weightFiles(folder: string): Map<string, string> {
  const single = join(folder, SINGLE_FILE)
  const indexPath = join(folder, INDEX_FILE)
  if (!existsSync(indexPath)) {
    if (!existsSync(single)) throw new ModelFormatError(folder, `neither ${SINGLE_FILE} nor ${INDEX_FILE} found`)
    const names = readSafetensorsHeader(single).entries.keys()
    return new Map([...names].map((n) => [n, single]))
  }
  const index = readJsonFile(indexPath, MAX_INDEX_JSON_BYTES, 'shard index')
  if (!isRecord(index) || !isRecord(index.weight_map)) throw new ModelFormatError(indexPath, '"weight_map" must be an object')
  const map = new Map<string, string>()
  const shards = new Set<string>()
  for (const [name, file] of Object.entries(index.weight_map)) {
    // Shards must be plain file names inside the folder: no paths, so the index cannot point elsewhere.
    if (typeof file !== 'string' || file !== basename(file) || file === '..' || !file.endsWith('.safetensors')) {
      throw new ModelFormatError(indexPath, `weight_map["${name}"] must be a .safetensors file name in the same folder`)
    }
    shards.add(file)
    if (shards.size > MAX_SHARDS) throw new ModelFormatError(indexPath, `more than ${MAX_SHARDS} shard files`)
    map.set(name, join(folder, file))
  }
  for (const shard of shards) {
    if (!existsSync(join(folder, shard))) throw new ModelFormatError(indexPath, `shard ${shard} is listed but missing`)
  }
  return map
}

/** Every tensor by name, from each shard's header (the data is read later, from the layout). */
function readEntries(folder: string): Map<string, SafetensorsEntry & { file: string; fileSizeBytes: number }> {
  const files = weightFiles(folder)
  const entries = new Map<string, SafetensorsEntry & { file: string; fileSizeBytes: number }>()
  for (const file of new Set(files.values())) {
    const header = readSafetensorsHeader(file)
    for (const e of header.entries.values()) {
      const listed = files.get(e.name)
      if (listed !== undefined && listed !== file) continue
      entries.set(e.name, { ...e, file, fileSizeBytes: header.fileSizeBytes })
    }
  }
  for (const [name, file] of files) {
    if (!entries.has(name)) throw new ModelFormatError(file, `tensor "${name}" is listed in ${INDEX_FILE} but not stored here`)
  }
  return entries
}

/** Checks presence and shape of every tensor the config needs and lays the weights out over the shards. */
function weightLayout(folder: string, config: ModelConfig): { layout: WeightLayout; dtypes: string[] } {
  const entries = readEntries(folder)
  const files: { path: string; sizeBytes: number }[] = []
  const used = new Set<string>()
  const need = (name: string, shape: readonly number[]): TensorSource => {
    const e = entries.get(name)
    if (!e) throw new ModelFormatError(folder, `tensor "${name}" is missing from the safetensors files`)
    if (e.shape.length !== shape.length || e.shape.some((d, i) => d !== shape[i])) {
      throw new ModelFormatError(e.file, `tensor "${name}" has shape [${e.shape.join(', ')}], expected [${shape.join(', ')}]`)
    }
    used.add(e.dtype)
    let file = files.findIndex((f) => f.path === e.file)
    if (file < 0) file = files.push({ path: e.file, sizeBytes: e.fileSizeBytes }) - 1
    return { name, shape: e.shape, encoding: { kind: 'dense', dtype: e.dtype }, file, offset: e.begin, byteLength: e.end - e.begin }
  }
  const { dim, hiddenDim, vocabSize } = config
  const qDim = config.nHeads * config.headDim
  const kvDim = config.nKvHeads * config.headDim
  const hasEmbed = entries.has('model.embed_tokens.weight')
  const hasHead = entries.has('lm_head.weight')
  let tokenEmbedding: TensorSource
  let output: TensorSource | null = null
  if (config.tiedEmbeddings && (hasEmbed || hasHead)) {
    // Some exports (TinyStories-656K) store only lm_head.weight for the tied pair.
    tokenEmbedding = need(hasEmbed ? 'model.embed_tokens.weight' : 'lm_head.weight', [vocabSize, dim])
  } else {
    tokenEmbedding = need('model.embed_tokens.weight', [vocabSize, dim])
    if (!hasHead) throw new ModelFormatError(folder, 'tie_word_embeddings is false but lm_head.weight is missing')
    output = need('lm_head.weight', [vocabSize, dim])
  }
  const layers = Array.from({ length: config.nLayers }, (_, l): LayerSources => {
    const p = `model.layers.${l}.`
    const bias = (name: string, n: number): TensorSource | null => (config.qkvBias ? need(p + name, [n]) : null)
    return {
      attnNorm: need(p + 'input_layernorm.weight', [dim]),
      wq: need(p + 'self_attn.q_proj.weight', [qDim, dim]),
      wk: need(p + 'self_attn.k_proj.weight', [kvDim, dim]),
      wv: need(p + 'self_attn.v_proj.weight', [kvDim, dim]),
      wo: need(p + 'self_attn.o_proj.weight', [dim, qDim]),
      bq: bias('self_attn.q_proj.bias', qDim),
      bk: bias('self_attn.k_proj.bias', kvDim),
      bv: bias('self_attn.v_proj.bias', kvDim),
      ffnNorm: need(p + 'post_attention_layernorm.weight', [dim]),
      wGate: need(p + 'mlp.gate_proj.weight', [hiddenDim, dim]),
      wUp: need(p + 'mlp.up_proj.weight', [hiddenDim, dim]),
      wDown: need(p + 'mlp.down_proj.weight', [dim, hiddenDim])
    }
  })
  const finalNorm = need('model.norm.weight', [dim])
  return { layout: { files, tokenEmbedding, layers, finalNorm, output }, dtypes: [...used].sort() }
}

/** eos/bos ids from generation_config.json (optional). */
function readGenerationConfig(folder: string): { bosId: number | null; eosIds: number[] } {
  const file = join(folder, 'generation_config.json')
  if (!existsSync(file)) return { bosId: null, eosIds: [] }
  const json = readJsonFile(file, MAX_HF_CONFIG_BYTES, 'generation config')
  if (!isRecord(json)) throw new ModelFormatError(file, 'top level must be a JSON object')
  const ids = (v: unknown, field: string): number[] => {
    if (v === undefined || v === null) return []
    const list: readonly unknown[] = Array.isArray(v) ? v : [v]
    return list.map((x) => {
      if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) throw new ModelFormatError(file, `${field} must be a token id or a list of ids`)
      return x
    })
  }
  const bos = ids(json.bos_token_id, 'bos_token_id')
  return { bosId: bos[0] ?? null, eosIds: ids(json.eos_token_id, 'eos_token_id') }
}

/** Loads a Hugging Face model folder. */
export async function loadHfModel(folder: string, options: LoadOptions = {}): Promise<LoadedModel> {
  try {
    if (!statSync(folder).isDirectory()) throw new ModelFormatError(folder, 'not a folder')
  } catch (e) {
    if (e instanceof ModelFormatError) throw e
    throw new ModelFormatError(folder, 'folder not found')
  }
  const hf = readHfConfig(join(folder, 'config.json'))
  const generation = readGenerationConfig(folder)
  const eosCandidates = [...generation.eosIds, ...hf.eosIds]
  const { tokenizer, chatTemplate } = loadHfTokenizer(folder, {
    bosId: hf.bosId ?? generation.bosId,
    eosId: eosCandidates[0] ?? null
  })
  if (tokenizer.vocabSize > hf.config.vocabSize) {
    throw new ModelFormatError(
      join(folder, 'tokenizer.json'),
      `tokenizer has ${tokenizer.vocabSize} tokens but config.json vocab_size is ${hf.config.vocabSize}`
    )
  }
  const { layout, dtypes } = weightLayout(folder, hf.config)
  const tied = layout.output === null
  const stops = new Set<number>(eosCandidates)
  if (tokenizer.eosId !== null) stops.add(tokenizer.eosId)
  for (const id of tokenizer.extraStopIds) stops.add(id)
  for (const id of stops) {
    if (id >= hf.config.vocabSize) throw new ModelFormatError(folder, `stop token id ${id} is outside the vocabulary (${hf.config.vocabSize})`)
  }
  const upper = dtypes.map((d) => d.toUpperCase())
  return {
    path: folder,
    format: 'hf',
    config: { ...hf.config, tiedEmbeddings: tied },
    weights: options.weights === false ? null : readWeights(layout),
    layout,
    tokenizer,
    chatTemplate,
    quantization: upper.length === 1 ? upper[0] : `mixed (${dtypes.join(', ')})`,
    tensorTypes: dtypes,
    stopTokenIds: [...stops],
    promptStyle: 'tokenizer'
  }
}
