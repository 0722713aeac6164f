/**
 * @file GPT-2 byte-level BPE for GGUF `tokenizer.ggml.model = 'gpt2'` vocabularies (Llama 3, Qwen2), as
 * llama.cpp's llm_tokenizer_bpe: special tokens are cut out first, the rest is split by the pre-tokenizer
 * regex named by `tokenizer.ggml.pre`, each word's UTF-8 bytes are mapped to printable characters, and
 * adjacent symbols are merged lowest merge rank first.
 */
import { ModelFormatError } from '../errors'
import { TOKEN_TYPE, mergeBestPairs, splitOnSpecialTokens, utf8Decode } from './spm'
import type { DecodeOptions, EncodeOptions, GgufVocab, Tokenizer } from './types'

const CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"

/** Pre-tokenizer patterns (llama.cpp llama-vocab.cpp), by family. */
const PRE_PATTERNS = {
  gpt2: "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
  llama3: `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  qwen2: `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`
} as const

/** tokenizer.ggml.pre values that select a non-default pattern; anything else uses GPT-2's. */
const PRE_FAMILY: Readonly<Record<string, keyof typeof PRE_PATTERNS>> = {
  llama3: 'llama3',
  'llama-v3': 'llama3',
  'llama-bpe': 'llama3',
  falcon3: 'llama3',
  qwen2: 'qwen2',
  'deepseek-r1-qwen': 'qwen2'
}

/** GPT-2's bytes_to_unicode: printable bytes map to themselves, the rest to U+0100 upward. */
function byteToUnicodeTable(): string[] {
  const table = new Array<string>(256)
  let extra = 0
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)
    table[b] = String.fromCodePoint(printable ? b : 256 + extra++)
  }
  return table
}

/** The pre-tokenizer regex for a `tokenizer.ggml.pre` value (unknown values get GPT-2's pattern). */
export function preTokenizerPattern(pre: string | null): RegExp {
  const family = pre === null ? 'gpt2' : (PRE_FAMILY[pre] ?? 'gpt2')
  return new RegExp(PRE_PATTERNS[family], 'gu')
}

/** Builds the byte-level BPE tokenizer for a GGUF 'gpt2' vocabulary. */
export function createBpeTokenizer(vocab: GgufVocab, extraStopIds: readonly number[] = []): Tokenizer {
  const source = 'GGUF tokenizer.ggml.merges'
  const n = vocab.tokens.length
  const idOf = new Map<string, number>()
  for (let id = 0; id < n; id++) if (!idOf.has(vocab.tokens[id])) idOf.set(vocab.tokens[id], id)
  const ranks = new Map<string, number>()
  ;(vocab.merges ?? []).forEach((merge, rank) => {
    const space = merge.indexOf(' ', 1)
    if (space <= 0 || space === merge.length - 1) throw new ModelFormatError(source, `merge ${rank} "${merge}" is not "left right"`)
    // Byte-level pieces never hold a plain space, so the first space after position 0 separates the pair.
    if (!ranks.has(merge)) ranks.set(merge, rank)
  })
  const pattern = preTokenizerPattern(vocab.pre)
  // Llama 3's tokenizer takes a whole pre-tokenized word when it is itself a token (llama.cpp ignore_merges).
  const ignoreMerges = vocab.pre !== null && PRE_FAMILY[vocab.pre] === 'llama3'
  const byteToChar = byteToUnicodeTable()
  const charToByte = new Map<string, number>(byteToChar.map((c, b) => [c, b]))
  const types = Int32Array.from({ length: n }, (_, id) => {
    if (vocab.tokenTypes) return vocab.tokenTypes[id]
    return /^<\|.*\|>$/s.test(vocab.tokens[id]) ? TOKEN_TYPE.control : TOKEN_TYPE.normal
  })
  const specials: { text: string; id: number }[] = []
  const userDefined: { text: string; id: number }[] = []
  for (let id = 0; id < n; id++) {
    if (types[id] === TOKEN_TYPE.control) specials.push({ text: vocab.tokens[id], id })
    if (types[id] === TOKEN_TYPE.userDefined) userDefined.push({ text: vocab.tokens[id], id })
  }
  const allSpecials = [...specials, ...userDefined]
  const encoder = new TextEncoder()
  const pairScore = (left: string, right: string): number | undefined => {
    const rank = ranks.get(left + ' ' + right)
    return rank === undefined ? undefined : -rank
  }
  const cache = new Map<string, number[]>()
  const MAX_CACHE_WORDS = 10_000

  const encodeWord = (word: string, out: number[]): void => {
    const cached = cache.get(word)
    if (cached) {
      for (const id of cached) out.push(id)
      return
    }
    let mapped = ''
    for (const b of encoder.encode(word)) mapped += byteToChar[b]
    const ids: number[] = []
    const whole = ignoreMerges ? idOf.get(mapped) : undefined
    if (whole !== undefined) ids.push(whole)
    else {
      const symbols = Array.from(mapped, (ch) => ({ text: ch, id: -1 }))
      for (const sym of mergeBestPairs(symbols, pairScore)) {
        const id = idOf.get(sym.text)
        if (id !== undefined) ids.push(id)
        else {
          // A merge result missing from the vocabulary: spell it out by characters (llama.cpp does the same).
          for (const ch of sym.text) {
            const cid = idOf.get(ch) ?? vocab.unkId
            if (cid !== null) ids.push(cid)
          }
        }
      }
    }
    if (cache.size < MAX_CACHE_WORDS) cache.set(word, ids)
    for (const id of ids) out.push(id)
  }

  const checkId = (id: number): void => {
    if (!Number.isInteger(id) || id < 0 || id >= n) throw new RangeError(`token id ${id} outside vocabulary of ${n}`)
  }
  const isSpecial = (id: number): boolean =>
    id >= 0 && id < n && (types[id] === TOKEN_TYPE.control || types[id] === TOKEN_TYPE.unknown || types[id] === TOKEN_TYPE.unused)

  return {
    kind: 'bpe',
    vocabSize: n,
    bosId: vocab.bosId,
    eosId: vocab.eosId,
    extraStopIds,
    encode(text: string, options: EncodeOptions = {}): number[] {
      const out: number[] = []
      if ((options.addBos ?? vocab.addBos) && vocab.bosId !== null) out.push(vocab.bosId)
      const fragments = splitOnSpecialTokens(text, (options.parseSpecial ?? true) ? allSpecials : userDefined)
      for (const f of fragments) {
        if ('id' in f) {
          out.push(f.id)
          continue
        }
        for (const m of f.text.matchAll(pattern)) encodeWord(m[0], out)
      }
      return out
    },
    decode(ids: readonly number[], options: DecodeOptions = {}): string {
      const skip = options.skipSpecialTokens ?? true
      const bytes: number[] = []
      for (const id of ids) {
        checkId(id)
        const text = vocab.tokens[id]
        const t = types[id]
        if (isSpecial(id)) {
          if (!skip) for (const b of encoder.encode(text)) bytes.push(b)
          continue
        }
        if (t === TOKEN_TYPE.userDefined) {
          // User-defined tokens are stored as plain text, not byte-mapped.
          for (const b of encoder.encode(text)) bytes.push(b)
          continue
        }
        for (const ch of text) {
          const b = charToByte.get(ch)
          if (b !== undefined) bytes.push(b)
          else for (const u of encoder.encode(ch)) bytes.push(u)
        }
      }
      return utf8Decode(bytes)
    },
    tokenText(id: number): string {
      checkId(id)
      return vocab.tokens[id]
    },
    isSpecial
  }
}
