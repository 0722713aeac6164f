/**
 * @file The llama2.c `tok*.bin` tokenizer: parse the export and encode/decode exactly like run.c's
 * `encode()` and `decode()`, so prompts and generated text match the reference program.
 *
 * Layout: int32 max_token_length, then per token id: float32 score, int32 len, len raw UTF-8 bytes.
 */
import { BinaryReader } from '../binary-reader'
import { ModelFormatError } from '../errors'
import { readFileCapped } from '../file-read'
import { byteTokenValue, mergeBestPairs, utf8Decode } from './spm'
import type { DecodeOptions, EncodeOptions, Tokenizer } from './types'

/** Largest vocabulary accepted (Llama 3 has 128,256; this is generous and bounds the parse loop). */
export const MAX_LLAMA2C_VOCAB = 1 << 20
/** Longest token text in bytes; run.c sizes its merge buffer from this. */
export const MAX_LLAMA2C_TOKEN_BYTES = 4096
/** Largest tokenizer file read (the 32k Llama 2 export is ~430 kB). */
export const MAX_LLAMA2C_TOKENIZER_BYTES = 64 * 1024 * 1024

const BOS_ID = 1
const EOS_ID = 2
/** ids 0..2 are <unk>, BOS and EOS in every llama2.c export */
const SPECIAL_COUNT = 3
/** byte-fallback token id = byte + 3 (run.c) */
const BYTE_OFFSET = 3

/** Parses tok*.bin bytes holding exactly `vocabSize` tokens. */
export function parseLlama2cTokenizer(bytes: Uint8Array, vocabSize: number, file: string): Tokenizer {
  if (!Number.isInteger(vocabSize) || vocabSize < SPECIAL_COUNT + 256 || vocabSize > MAX_LLAMA2C_VOCAB) {
    throw new ModelFormatError(
      file,
      `vocabulary size ${vocabSize} is not supported (needs ${SPECIAL_COUNT + 256}..${MAX_LLAMA2C_VOCAB}: 3 specials + 256 byte tokens)`
    )
  }
  const r: BinaryReader = new BinaryReader(bytes, file)
  const maxTokenBytes = r.i32('max_token_length')
  if (maxTokenBytes <= 0 || maxTokenBytes > MAX_LLAMA2C_TOKEN_BYTES) {
    r.fail(`max_token_length ${maxTokenBytes} is outside 1..${MAX_LLAMA2C_TOKEN_BYTES}`, 0)
  }
  const pieces: string[] = new Array<string>(vocabSize)
  const scores = new Float32Array(vocabSize)
  for (let id = 0; id < vocabSize; id++) {
    scores[id] = r.f32(`score of token ${id}`)
    if (!Number.isFinite(scores[id])) r.fail(`score of token ${id} is ${scores[id]}`, r.offset - 4)
    const at = r.offset
    const len = r.i32(`length of token ${id}`)
    if (len < 0 || len > maxTokenBytes) r.fail(`token ${id} has length ${len}, outside 0..max_token_length ${maxTokenBytes}`, at)
    pieces[id] = r.utf8(len, `text of token ${id}`)
  }
  if (r.remaining !== 0) {
    r.fail(`${r.remaining} bytes follow token ${vocabSize - 1}; the file holds more than ${vocabSize} tokens (vocabulary size mismatch?)`)
  }
  return createLlama2cTokenizer(pieces, scores)
}

/** Reads a tok*.bin file holding exactly `vocabSize` tokens. */
export function loadLlama2cTokenizer(path: string, vocabSize: number): Tokenizer {
  return parseLlama2cTokenizer(readFileCapped(path, MAX_LLAMA2C_TOKENIZER_BYTES, 'tokenizer'), vocabSize, path)
}

/** run.c semantics over an in-memory vocabulary (pieces use a plain space, not ▁). */
function createLlama2cTokenizer(pieces: readonly string[], scores: Float32Array): Tokenizer {
  const vocabSize = pieces.length
  const idOf = new Map<string, number>()
  for (let id = 0; id < vocabSize; id++) if (!idOf.has(pieces[id])) idOf.set(pieces[id], id)
  const encoder = new TextEncoder()
  const pairScore = (left: string, right: string): number | undefined => {
    const id = idOf.get(left + right)
    // run.c only takes a merge whose score beats its -1e10 starting best.
    return id === undefined || !(scores[id] > -1e10) ? undefined : scores[id]
  }
  const checkId = (id: number): void => {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new RangeError(`token id ${id} outside vocabulary of ${vocabSize}`)
    }
  }
  const isSpecial = (id: number): boolean => id >= 0 && id < SPECIAL_COUNT

  return {
    kind: 'llama2c',
    vocabSize,
    bosId: BOS_ID,
    eosId: EOS_ID,
    extraStopIds: [],
    encode(text: string, options: EncodeOptions = {}): number[] {
      const out: number[] = []
      // run.c's generate() encodes prompts with bos=1, eos=0.
      if (options.addBos ?? true) out.push(BOS_ID)
      if (text.length === 0) return out
      // Dummy prefix: the token of a single space starts every non-empty text.
      const symbols: { text: string; id: number }[] = []
      const space = idOf.get(' ')
      if (space !== undefined) symbols.push({ text: ' ', id: space })
      for (const ch of text) {
        const id = idOf.get(ch)
        if (id !== undefined) {
          symbols.push({ text: ch, id })
          continue
        }
        // Byte fallback: each UTF-8 byte becomes token byte+3, whose text is "<0xHH>" (so it never merges).
        for (const b of encoder.encode(ch)) {
          const byteId = b + BYTE_OFFSET
          symbols.push({ text: pieces[byteId], id: byteId })
        }
      }
      for (const sym of mergeBestPairs(symbols, pairScore)) {
        const id = sym.id >= 0 ? sym.id : idOf.get(sym.text)
        // Every merged text was found in the vocabulary by pairScore, so this cannot miss.
        if (id === undefined) throw new Error(`internal: merged piece ${JSON.stringify(sym.text)} not in vocabulary`)
        out.push(id)
      }
      return out
    },
    decode(ids: readonly number[], options: DecodeOptions = {}): string {
      const skip = options.skipSpecialTokens ?? true
      const bytes: number[] = []
      let prev = -1
      for (const id of ids) {
        checkId(id)
        const after = prev
        prev = id
        if (skip && isSpecial(id)) continue
        let piece = pieces[id]
        // run.c decode(): a piece following BOS loses its leading space.
        if (after === BOS_ID && piece.startsWith(' ')) piece = piece.slice(1)
        const byte = byteTokenValue(piece)
        if (byte !== null) bytes.push(byte)
        else for (const b of encoder.encode(piece)) bytes.push(b)
      }
      return utf8Decode(bytes)
    },
    tokenText(id: number): string {
      checkId(id)
      return pieces[id]
    },
    isSpecial
  }
}
