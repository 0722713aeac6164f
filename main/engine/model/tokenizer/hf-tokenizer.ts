/**
 * @file Hugging Face `tokenizer.json` + `tokenizer_config.json` through @huggingface/tokenizers, behind
 * our Tokenizer contract. The JSON is validated first (the shapes the library relies on), so a broken
 * file becomes a ModelFormatError naming it instead of a TypeError deep inside the library.
 */
import { isRecord, type JsonRecord } from '../../../common/reader'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Tokenizer as HfLibTokenizer } from '@huggingface/tokenizers'
import { ModelFormatError } from '../errors'
import { readTextCapped } from '../file-read'
import type { DecodeOptions, EncodeOptions, Tokenizer } from './types'

/** Largest vocabulary accepted (bounds the id space the library allocates arrays for). */
export const MAX_HF_VOCAB = 1 << 22
/** Largest tokenizer.json read (Llama 3's is ~9 MB; Gemma's ~35 MB). */
export const MAX_TOKENIZER_JSON_BYTES = 128 * 1024 * 1024
/** Largest tokenizer_config.json read (chat templates can be long, but not this long). */
export const MAX_TOKENIZER_CONFIG_BYTES = 8 * 1024 * 1024

const END_OF_TURN_TEXTS: readonly string[] = ['<|im_end|>', '<|eot_id|>', '<|eom_id|>', '<|end_of_text|>', '<|endoftext|>', '<end_of_turn>']

/** A tokenizer plus what tokenizer_config.json says about chat formatting. */
export interface HfTokenizerFiles {
  readonly tokenizer: Tokenizer
  /** chat_template (the "default" one when a list is given), or null */
  readonly chatTemplate: string | null
  readonly bosToken: string | null
  readonly eosToken: string | null
}

/** Reads and parses a JSON file, at most `maxBytes`; errors name the file and call it `what` ("tokenizer"). */
export function readJsonFile(path: string, maxBytes: number, what: string): unknown {
  const text = readTextCapped(path, maxBytes, what)
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new ModelFormatError(path, `not valid JSON: ${e instanceof Error ? e.message : String(e)}`)
  }
}

function isVocabId(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < MAX_HF_VOCAB
}

/** A special-token field: "text", {content: "text"} or null/absent. */
function tokenString(value: unknown, field: string, file: string): string | null {
  if (value === undefined || value === null) return null
  if (typeof value === 'string') return value
  if (isRecord(value) && typeof value.content === 'string') return value.content
  throw new ModelFormatError(file, `${field} must be a string or {"content": string}`)
}

/** Checks the parts of tokenizer.json the library reads without checking; returns a copy safe to pass on. */
function validateTokenizerJson(json: unknown, file: string): { json: JsonRecord; maxId: number; special: Map<number, string> } {
  if (!isRecord(json)) throw new ModelFormatError(file, 'top level must be a JSON object')
  const model = json.model
  if (!isRecord(model)) throw new ModelFormatError(file, '"model" must be an object')
  if (model.type !== undefined && typeof model.type !== 'string') throw new ModelFormatError(file, '"model.type" must be a string')
  let maxId = -1
  const vocab = model.vocab
  if (Array.isArray(vocab)) {
    // Unigram: [[piece, score], ...], id = index
    if (vocab.length > MAX_HF_VOCAB) throw new ModelFormatError(file, `vocab has ${vocab.length} entries, more than ${MAX_HF_VOCAB}`)
    vocab.forEach((entry, i) => {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string' || typeof entry[1] !== 'number') {
        throw new ModelFormatError(file, `model.vocab[${i}] must be [piece, score]`)
      }
    })
    maxId = vocab.length - 1
  } else if (isRecord(vocab)) {
    for (const [piece, id] of Object.entries(vocab)) {
      if (!isVocabId(id)) throw new ModelFormatError(file, `model.vocab["${piece}"] = ${String(id)} is not an id in 0..${MAX_HF_VOCAB - 1}`)
      maxId = Math.max(maxId, id)
    }
  } else {
    throw new ModelFormatError(file, '"model.vocab" must be an object or an array')
  }
  if (model.type === 'BPE' || model.merges !== undefined) {
    const merges = model.merges
    const ok =
      Array.isArray(merges) &&
      merges.every(
        (m) => typeof m === 'string' || (Array.isArray(m) && m.length === 2 && typeof m[0] === 'string' && typeof m[1] === 'string')
      )
    if (!ok) throw new ModelFormatError(file, '"model.merges" must be a list of "a b" strings or [a, b] pairs')
  }
  const added = json.added_tokens ?? []
  if (!Array.isArray(added)) throw new ModelFormatError(file, '"added_tokens" must be a list')
  const special = new Map<number, string>()
  added.forEach((t, i) => {
    if (!isRecord(t) || !isVocabId(t.id) || typeof t.content !== 'string' || t.content.length === 0) {
      throw new ModelFormatError(file, `added_tokens[${i}] needs an integer "id" in range and a non-empty "content"`)
    }
    for (const flag of ['special', 'lstrip', 'rstrip', 'normalized', 'single_word']) {
      if (t[flag] !== undefined && typeof t[flag] !== 'boolean') throw new ModelFormatError(file, `added_tokens[${i}].${flag} must be a boolean`)
    }
    maxId = Math.max(maxId, t.id)
    if (t.special === true) special.set(t.id, t.content)
  })
  // The library requires these keys to exist; tokenizer.json writes null for "none".
  const copy: JsonRecord = {
    ...json,
    added_tokens: added,
    normalizer: json.normalizer ?? null,
    pre_tokenizer: json.pre_tokenizer ?? null,
    post_processor: json.post_processor ?? null,
    decoder: json.decoder ?? null
  }
  return { json: copy, maxId, special }
}

function buildLibTokenizer(json: JsonRecord, config: JsonRecord, file: string): HfLibTokenizer {
  try {
    return new HfLibTokenizer(json, config)
  } catch (e) {
    throw new ModelFormatError(file, `cannot build the tokenizer: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/** Ids used when tokenizer_config.json names no BOS/EOS token (from config.json / generation_config.json). */
export interface HfTokenFallbacks {
  readonly bosId?: number | null
  readonly eosId?: number | null
}

/** Builds the tokenizer from parsed tokenizer.json and tokenizer_config.json contents. */
export function createHfTokenizer(
  tokenizerJson: unknown,
  configJson: unknown,
  files: { readonly tokenizer: string; readonly config: string },
  fallbacks: HfTokenFallbacks = {}
): HfTokenizerFiles {
  const { json, maxId, special } = validateTokenizerJson(tokenizerJson, files.tokenizer)
  if (!isRecord(configJson)) throw new ModelFormatError(files.config, 'top level must be a JSON object')
  const bosToken = tokenString(configJson.bos_token, 'bos_token', files.config)
  const eosToken = tokenString(configJson.eos_token, 'eos_token', files.config)
  for (const flag of ['add_bos_token', 'add_eos_token', 'clean_up_tokenization_spaces']) {
    if (configJson[flag] !== undefined && configJson[flag] !== null && typeof configJson[flag] !== 'boolean') {
      throw new ModelFormatError(files.config, `${flag} must be a boolean`)
    }
  }
  const chatTemplate = parseChatTemplate(configJson.chat_template, files.config)
  const lib = buildLibTokenizer(json, configJson, files.tokenizer)
  const vocabSize = maxId + 1
  const idFor = (text: string | null, fallback: number | null | undefined, field: string): number | null => {
    if (text === null) return fallback ?? null
    const id = lib.token_to_id(text)
    if (id === undefined) throw new ModelFormatError(files.config, `${field} "${text}" is not in the vocabulary of ${files.tokenizer}`)
    return id
  }
  const bosId = idFor(bosToken, fallbacks.bosId, 'bos_token')
  const eosId = idFor(eosToken, fallbacks.eosId, 'eos_token')
  // "Own setting" for BOS: add_bos_token when given, else whatever the post-processor does.
  const addBosDefault =
    typeof configJson.add_bos_token === 'boolean'
      ? configJson.add_bos_token
      : bosId !== null && lib.encode('', { add_special_tokens: true }).ids[0] === bosId
  const cleanUp = configJson.clean_up_tokenization_spaces === true
  let plain: HfLibTokenizer | null = null
  // Without parseSpecial, special strings must be spelled out: a second library tokenizer that does not know them.
  const plainTokenizer = (): HfLibTokenizer => {
    if (plain) return plain
    const added = Array.isArray(json.added_tokens) ? json.added_tokens.filter((t) => isRecord(t) && t.special !== true) : []
    plain = buildLibTokenizer({ ...json, added_tokens: added }, configJson, files.tokenizer)
    return plain
  }
  const extraStopIds: number[] = []
  for (const text of END_OF_TURN_TEXTS) {
    const id = lib.token_to_id(text)
    if (id !== undefined && id !== eosId && !extraStopIds.includes(id)) extraStopIds.push(id)
  }
  const checkId = (id: number): void => {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) throw new RangeError(`token id ${id} outside vocabulary of ${vocabSize}`)
  }

  const tokenizer: Tokenizer = {
    kind: 'hf',
    vocabSize,
    bosId,
    eosId,
    extraStopIds,
    encode(text: string, options: EncodeOptions = {}): number[] {
      const source = (options.parseSpecial ?? true) ? lib : plainTokenizer()
      const ids = text.length === 0 ? [] : source.encode(text, { add_special_tokens: false }).ids
      return (options.addBos ?? addBosDefault) && bosId !== null ? [bosId, ...ids] : ids
    },
    decode(ids: readonly number[], options: DecodeOptions = {}): string {
      if (ids.length === 0) return ''
      ids.forEach(checkId)
      return lib.decode([...ids], {
        skip_special_tokens: options.skipSpecialTokens ?? true,
        clean_up_tokenization_spaces: cleanUp
      })
    },
    tokenText(id: number): string {
      checkId(id)
      return lib.id_to_token(id) ?? ''
    },
    isSpecial(id: number): boolean {
      return special.has(id)
    }
  }
  return { tokenizer, chatTemplate, bosToken, eosToken }
}

/** chat_template: a string, or a list of {name, template} of which "default" is used. */
function parseChatTemplate(value: unknown, file: string): string | null {
  if (value === undefined || value === null) return null
  if (typeof value === 'string') return value
  if (Array.isArray(value)) {
    for (const [i, entry] of value.entries()) {
      if (!isRecord(entry) || typeof entry.name !== 'string' || typeof entry.template !== 'string') {
        throw new ModelFormatError(file, `chat_template[${i}] must be {"name": string, "template": string}`)
      }
      if (entry.name === 'default') return entry.template
    }
    return null
  }
  throw new ModelFormatError(file, 'chat_template must be a string or a list of {name, template}')
}

/** Loads `tokenizer.json`, `tokenizer_config.json` (optional) and `chat_template.jinja` (optional) from a model folder. */
export function loadHfTokenizer(folder: string, fallbacks: HfTokenFallbacks = {}): HfTokenizerFiles {
  const tokenizerFile = join(folder, 'tokenizer.json')
  const configFile = join(folder, 'tokenizer_config.json')
  const tokenizerJson = readJsonFile(tokenizerFile, MAX_TOKENIZER_JSON_BYTES, 'tokenizer')
  let configJson: unknown = {}
  if (existsSync(configFile)) configJson = readJsonFile(configFile, MAX_TOKENIZER_CONFIG_BYTES, 'tokenizer config')
  const files = createHfTokenizer(tokenizerJson, configJson, { tokenizer: tokenizerFile, config: configFile }, fallbacks)
  // Newer transformers versions save the template beside the config instead of inside it.
  const templateFile = join(folder, 'chat_template.jinja')
  if (files.chatTemplate !== null || !existsSync(templateFile)) return files
  return { ...files, chatTemplate: readTextCapped(templateFile, MAX_TOKENIZER_CONFIG_BYTES, 'chat template') }
}
