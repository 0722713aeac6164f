/**
 * @file SentencePiece-style tokenizer for GGUF `tokenizer.ggml.model = 'llama'` vocabularies, matching
 * llama.cpp's llm_tokenizer_spm: whitespace becomes ▁, a dummy-prefix ▁ starts the text (and follows every
 * special token), adjacent symbols are merged by best score, and characters missing from the vocabulary
 * fall back to `<0xHH>` byte tokens. Also holds the two pieces shared with the other tokenizers: the
 * best-pair merge loop and the special-token splitter.
 */
import type { DecodeOptions, EncodeOptions, GgufVocab, Tokenizer } from './types'

/** GGUF token types (tokenizer.ggml.token_type). */
export const TOKEN_TYPE = { normal: 1, unknown: 2, control: 3, userDefined: 4, unused: 5, byte: 6 } as const

const SPACE_MARK = '\u2581'
const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/

/** A merged symbol: its text and the id it had before merging (-1 once merged or when unknown). */
export interface MergedSymbol {
  readonly text: string
  readonly id: number
}

interface Bigram {
  readonly left: number
  readonly right: number
  readonly score: number
  /** text length of left + right when queued; a mismatch later means the pair went stale */
  readonly length: number
}

/** Max-heap on score; ties go to the leftmost pair (as llama.cpp's llm_bigram_spm::comparator and run.c). */
class BigramQueue {
  private readonly heap: Bigram[] = []

  get size(): number {
    return this.heap.length
  }

  private before(a: Bigram, b: Bigram): boolean {
    return a.score > b.score || (a.score === b.score && a.left < b.left)
  }

  push(b: Bigram): void {
    const h = this.heap
    h.push(b)
    let i = h.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!this.before(h[i], h[p])) break
      ;[h[i], h[p]] = [h[p], h[i]]
      i = p
    }
  }

  pop(): Bigram {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (last !== undefined && h.length > 0) {
      h[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let best = i
        if (l < h.length && this.before(h[l], h[best])) best = l
        if (r < h.length && this.before(h[r], h[best])) best = r
        if (best === i) break
        ;[h[i], h[best]] = [h[best], h[i]]
        i = best
      }
    }
    return top
  }
}

/**
 * Repeatedly merges the adjacent pair with the highest `pairScore` (undefined = not mergeable) until no
 * pair merges. Equivalent to run.c's "scan all pairs, take the best, leftmost on ties" loop, in
 * O(n log n) with a priority queue and stale-entry skipping (llama.cpp's llm_tokenizer_spm_session).
 */
export function mergeBestPairs(
  symbols: readonly MergedSymbol[],
  pairScore: (left: string, right: string) => number | undefined
): MergedSymbol[] {
  const n = symbols.length
  const text = symbols.map((s) => s.text)
  const ids = symbols.map((s) => s.id)
  const prev = Array.from({ length: n }, (_, i) => i - 1)
  const next = Array.from({ length: n }, (_, i) => (i + 1 < n ? i + 1 : -1))
  const alive = new Array<boolean>(n).fill(true)
  const queue = new BigramQueue()
  const tryAdd = (left: number, right: number): void => {
    if (left < 0 || right < 0) return
    const score = pairScore(text[left], text[right])
    if (score === undefined) return
    queue.push({ left, right, score, length: text[left].length + text[right].length })
  }
  for (let i = 1; i < n; i++) tryAdd(i - 1, i)
  while (queue.size > 0) {
    const b = queue.pop()
    // Merges only ever grow a live symbol or kill it, so an unchanged total length means still valid.
    if (!alive[b.left] || !alive[b.right] || next[b.left] !== b.right) continue
    if (text[b.left].length + text[b.right].length !== b.length) continue
    text[b.left] += text[b.right]
    ids[b.left] = -1
    alive[b.right] = false
    next[b.left] = next[b.right]
    if (next[b.right] >= 0) prev[next[b.right]] = b.left
    tryAdd(prev[b.left], b.left)
    tryAdd(b.left, next[b.left])
  }
  const out: MergedSymbol[] = []
  for (let i = n > 0 ? 0 : -1; i >= 0; i = next[i]) out.push({ text: text[i], id: ids[i] })
  return out
}

/** A piece of input text: raw text to tokenize, or an already recognised special token. */
export type Fragment = { readonly text: string } | { readonly id: number }

/**
 * Splits `text` at every occurrence of the given special-token strings, longest first (llama.cpp's
 * tokenizer_st_partition), so "<|im_start|>" becomes one id instead of being spelled out.
 */
export function splitOnSpecialTokens(text: string, specials: readonly { text: string; id: number }[]): Fragment[] {
  let fragments: Fragment[] = [{ text }]
  const sorted = [...specials].filter((s) => s.text.length > 0).sort((a, b) => b.text.length - a.text.length)
  for (const special of sorted) {
    const nextFragments: Fragment[] = []
    for (const f of fragments) {
      if (!('text' in f) || !f.text.includes(special.text)) {
        nextFragments.push(f)
        continue
      }
      const parts = f.text.split(special.text)
      parts.forEach((part, i) => {
        if (i > 0) nextFragments.push({ id: special.id })
        if (part.length > 0) nextFragments.push({ text: part })
      })
    }
    fragments = nextFragments
  }
  return fragments
}

/** Decodes byte lists to text; invalid or incomplete UTF-8 becomes U+FFFD (the incremental detokenizer relies on it). */
export function utf8Decode(bytes: readonly number[]): string {
  return new TextDecoder('utf-8', { fatal: false }).decode(Uint8Array.from(bytes))
}

/** The byte value of a `<0xHH>` token text, or null. */
export function byteTokenValue(text: string): number | null {
  const m = BYTE_TOKEN.exec(text)
  return m ? parseInt(m[1], 16) : null
}

function tokenTypeOf(vocab: GgufVocab, id: number): number {
  if (vocab.tokenTypes) return vocab.tokenTypes[id]
  if (id === vocab.unkId) return TOKEN_TYPE.unknown
  if (id === vocab.bosId || id === vocab.eosId) return TOKEN_TYPE.control
  return byteTokenValue(vocab.tokens[id]) === null ? TOKEN_TYPE.normal : TOKEN_TYPE.byte
}

/** Builds the SentencePiece-style tokenizer for a GGUF 'llama' vocabulary. */
export function createSpmTokenizer(vocab: GgufVocab, extraStopIds: readonly number[] = []): Tokenizer {
  const n = vocab.tokens.length
  const scores = vocab.scores
  const idOf = new Map<string, number>()
  // First occurrence wins, like a sorted-vocab lookup would for the (rare) duplicate strings.
  for (let id = 0; id < n; id++) if (!idOf.has(vocab.tokens[id])) idOf.set(vocab.tokens[id], id)
  const types = Int32Array.from({ length: n }, (_, id) => tokenTypeOf(vocab, id))
  const byteIds = new Int32Array(256).fill(-1)
  for (let b = 0; b < 256; b++) {
    const hex = `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`
    const id = idOf.get(hex) ?? (b < 0x80 ? idOf.get(String.fromCharCode(b)) : undefined)
    if (id !== undefined) byteIds[b] = id
  }
  const isSpecialType = (t: number): boolean =>
    t === TOKEN_TYPE.control || t === TOKEN_TYPE.unknown || t === TOKEN_TYPE.unused
  // Control/unknown are recognised in text only when parseSpecial; user-defined always (llama.cpp rule).
  const specialText: { text: string; id: number; always: boolean }[] = []
  for (let id = 0; id < n; id++) {
    const t = types[id]
    if (t === TOKEN_TYPE.control || t === TOKEN_TYPE.unknown || t === TOKEN_TYPE.userDefined) {
      specialText.push({ text: vocab.tokens[id], id, always: t === TOKEN_TYPE.userDefined })
    }
  }
  const userDefinedOnly = specialText.filter((s) => s.always)
  const encoder = new TextEncoder()

  const pairScore = (left: string, right: string): number | undefined => {
    const id = idOf.get(left + right)
    if (id === undefined) return undefined
    return scores ? scores[id] : 0
  }

  const tokenizeRaw = (raw: string, out: number[]): void => {
    const text = raw.replace(/ /g, SPACE_MARK)
    const symbols = Array.from(text, (ch) => ({ text: ch, id: idOf.get(ch) ?? -1 }))
    for (const sym of mergeBestPairs(symbols, pairScore)) {
      const id = idOf.get(sym.text)
      if (id !== undefined) {
        out.push(id)
        continue
      }
      for (const b of encoder.encode(sym.text)) {
        if (byteIds[b] >= 0) out.push(byteIds[b])
        else if (vocab.unkId !== null) out.push(vocab.unkId)
      }
    }
  }

  const checkId = (id: number): void => {
    if (!Number.isInteger(id) || id < 0 || id >= n) throw new RangeError(`token id ${id} outside vocabulary of ${n}`)
  }

  return {
    kind: 'spm',
    vocabSize: n,
    bosId: vocab.bosId,
    eosId: vocab.eosId,
    extraStopIds,
    encode(text: string, options: EncodeOptions = {}): number[] {
      const out: number[] = []
      if ((options.addBos ?? vocab.addBos) && vocab.bosId !== null) out.push(vocab.bosId)
      const specials = (options.parseSpecial ?? true) ? specialText : userDefinedOnly
      // The dummy prefix goes before the first raw fragment and after every special token (llama.cpp).
      let prevSpecial = true
      for (const f of splitOnSpecialTokens(text, specials)) {
        if ('id' in f) {
          out.push(f.id)
          prevSpecial = true
          continue
        }
        // Empty text has no pieces at all (llama.cpp yields only BOS for ""), not a lone dummy prefix.
        if (f.text.length === 0) continue
        tokenizeRaw(vocab.addSpacePrefix && prevSpecial ? ' ' + f.text : f.text, out)
        prevSpecial = false
      }
      return out
    },
    decode(ids: readonly number[], options: DecodeOptions = {}): string {
      const skip = options.skipSpecialTokens ?? true
      const bytes: number[] = []
      let atStart = true
      for (const id of ids) {
        checkId(id)
        const t = types[id]
        const text = vocab.tokens[id]
        if (isSpecialType(t)) {
          if (!skip) for (const b of encoder.encode(text)) bytes.push(b)
          continue
        }
        const byte = t === TOKEN_TYPE.byte ? byteTokenValue(text) : null
        if (byte !== null) {
          bytes.push(byte)
          atStart = false
          continue
        }
        let piece = text.replaceAll(SPACE_MARK, ' ')
        // SentencePiece drops the dummy-prefix space of the first piece of a sequence.
        if (atStart && vocab.addSpacePrefix && piece.startsWith(' ')) piece = piece.slice(1)
        atStart = false
        for (const b of encoder.encode(piece)) bytes.push(b)
      }
      return utf8Decode(bytes)
    },
    tokenText(id: number): string {
      checkId(id)
      return vocab.tokens[id]
    },
    isSpecial(id: number): boolean {
      return id >= 0 && id < n && isSpecialType(types[id])
    }
  }
}
