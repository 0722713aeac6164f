/**
 * @file tokenizer.ggml.* metadata -> a validated GgufVocab, and the tokenizer built from it. Array
 * lengths must agree with the token count; special ids outside the vocabulary fall back to the
 * defaults, as llama.cpp does ("bad special token ... using default id").
 */
import { ModelFormatError } from './errors'
import type { GgufMetadata } from './gguf-metadata'
import { createGgufTokenizer } from './tokenizer/gguf-tokenizer'
import type { GgufVocab, Tokenizer } from './tokenizer/types'

/** tokenizer.ggml.model values we can tokenize. */
const SUPPORTED_TOKENIZER_MODELS = ['llama', 'gpt2'] as const
type TokenizerModel = (typeof SUPPORTED_TOKENIZER_MODELS)[number]

function isSupportedModel(m: string): m is TokenizerModel {
  return SUPPORTED_TOKENIZER_MODELS.some((known) => known === m)
}

/** Reads and validates the vocabulary. */
export function readGgufVocab(meta: GgufMetadata, file: string): GgufVocab {
  // explicitly typed so TypeScript narrows after calls to it
  const fail: (detail: string) => never = (detail) => {
    throw new ModelFormatError(file, detail)
  }
  const model = meta.string('tokenizer.ggml.model') ?? fail('no tokenizer (tokenizer.ggml.model is missing)')
  if (!isSupportedModel(model)) {
    fail(`tokenizer model "${model}" is not supported; supported: ${SUPPORTED_TOKENIZER_MODELS.join(', ')}`)
  }
  const m: TokenizerModel = model
  const tokens = meta.stringArray('tokenizer.ggml.tokens') ?? fail('tokenizer.ggml.tokens is missing')
  if (tokens.length === 0) fail('tokenizer.ggml.tokens is empty')
  const n = tokens.length

  const scoresIn = meta.numberArray('tokenizer.ggml.scores')
  if (scoresIn !== null && scoresIn.length !== n) fail(`tokenizer.ggml.scores has ${scoresIn.length} entries for ${n} tokens`)
  const typesIn = meta.numberArray('tokenizer.ggml.token_type')
  if (typesIn !== null && typesIn.length !== n) fail(`tokenizer.ggml.token_type has ${typesIn.length} entries for ${n} tokens`)
  if (typesIn !== null && !typesIn.every((t) => Number.isInteger(t) && t >= 0 && t <= 0x7fffffff)) {
    fail('tokenizer.ggml.token_type holds a value that is not a token type')
  }
  const merges = meta.stringArray('tokenizer.ggml.merges')
  if (m === 'gpt2' && merges === null) fail('tokenizer.ggml.merges is missing (required by the gpt2 tokenizer)')

  // SentencePiece vocabularies default to llama's ids; gpt2 ones have no defaults
  const defaults = m === 'llama' ? { bos: 1, eos: 2, unk: 0 } : { bos: null, eos: null, unk: null }
  const specialId = (key: string, fallback: number | null): number | null => {
    const v = meta.integer(`tokenizer.ggml.${key}`, -(2 ** 31), 2 ** 32 - 1)
    if (v !== null && v >= 0 && v < n) return v
    return fallback !== null && fallback < n ? fallback : null
  }
  return {
    model: m,
    pre: meta.string('tokenizer.ggml.pre'),
    tokens,
    scores: scoresIn === null ? null : Float32Array.from(scoresIn),
    tokenTypes: typesIn === null ? null : Int32Array.from(typesIn),
    merges,
    bosId: specialId('bos_token_id', defaults.bos),
    eosId: specialId('eos_token_id', defaults.eos),
    unkId: specialId('unknown_token_id', defaults.unk),
    eotId: specialId('eot_token_id', null),
    addBos: meta.bool('tokenizer.ggml.add_bos_token') ?? m === 'llama',
    addSpacePrefix: meta.bool('tokenizer.ggml.add_space_prefix') ?? m === 'llama'
  }
}

/** The tokenizer for a vocabulary read from `file`; anything it rejects is reported against the file. */
export function buildGgufTokenizer(vocab: GgufVocab, file: string): Tokenizer {
  try {
    return createGgufTokenizer(vocab)
  } catch (e) {
    if (e instanceof ModelFormatError) throw e
    throw new ModelFormatError(file, `tokenizer: ${e instanceof Error ? e.message : String(e)}`)
  }
}
