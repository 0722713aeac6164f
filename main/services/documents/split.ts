/**
 * @file Cutting a long text into parts that each fit a token budget, along the most natural boundary that works:
 * paragraphs, then sentences, then words, and only for a "word" longer than the budget (a URL, a base64 blob) inside
 * it. Parts are consecutive slices of the text: joined, they give it back exactly (nothing lost or repeated), and each
 * part's separator (the blank line, the space after a sentence) stays at its end.
 *
 * Token counts are not additive (a tokenizer may merge across a boundary), so parts are packed by the sum of their
 * pieces' counts and then checked whole; a part over the budget is cut again at its middle piece.
 */

/** Counts the tokens of a text (the model's tokenizer, without BOS). */
export type TokenCounter = (text: string) => number

/** Most parts one text may be cut into (a 64 MiB file in parts of ~100 tokens stays under it). */
export const MAX_PARTS = 1_000_000

/** The levels of boundary tried in order: each is a pattern that matches the end of a piece (its separator included). */
const LEVELS: readonly RegExp[] = [
  // a paragraph: up to and including the blank line(s) after it
  /[\s\S]*?(?:\n[ \t]*\n\s*|$)/y,
  // a sentence: up to and including the whitespace after . ! ? (or a line break)
  /[\s\S]*?(?:[.!?…]["')\]]*\s+|\n\s*|$)/y,
  // a word: up to and including the whitespace after it
  /\S*\s*|\s+/y
]

/** Consecutive pieces of `text` ending at the boundaries of `level`; joined, they are `text`. */
function piecesOf(text: string, level: RegExp): string[] {
  const pieces: string[] = []
  let at = 0
  while (at < text.length) {
    level.lastIndex = at
    const m = level.exec(text)
    const end = m === null || m[0].length === 0 ? text.length : at + m[0].length
    pieces.push(text.slice(at, end))
    at = end
  }
  return pieces
}

/** The longest prefix of `text` (at least one character, never half a surrogate pair) within `maxTokens`. */
function longestPrefix(text: string, count: TokenCounter, maxTokens: number): string {
  let lo = 1
  let hi = text.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (count(text.slice(0, mid)) <= maxTokens) lo = mid
    else hi = mid - 1
  }
  // a cut inside a surrogate pair moves before it (or after it, when the pair is all that fits)
  const code = text.charCodeAt(lo - 1)
  const inPair = code >= 0xd800 && code <= 0xdbff && lo < text.length
  return text.slice(0, inPair ? (lo > 1 ? lo - 1 : lo + 1) : lo)
}

/**
 * Parts of `text` of at most `maxTokens` tokens each (by `count`); joined they are `text`. Throws RangeError for a
 * budget under 1 token.
 */
export function splitByTokens(text: string, count: TokenCounter, maxTokens: number): string[] {
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new RangeError(`a part holds at least 1 token, got ${maxTokens}`)
  const parts: string[] = []
  const emit = (part: string): void => {
    if (parts.length >= MAX_PARTS) throw new RangeError(`the text needs more than ${MAX_PARTS} parts`)
    parts.push(part)
  }
  /** A piece over the budget: cut at the next level's boundaries, or by characters below the last. */
  const split = (piece: string, level: number): void => {
    if (level < LEVELS.length) return pack(piecesOf(piece, LEVELS[level]), level)
    for (let rest = piece; rest !== ''; ) {
      const head = longestPrefix(rest, count, maxTokens)
      emit(head)
      rest = rest.slice(head.length)
    }
  }
  /** A run of pieces packed within the budget, or cut in two at its middle piece (a lone piece goes a level down). */
  const place = (group: readonly string[], level: number): void => {
    const whole = group.join('')
    if (count(whole) <= maxTokens) return emit(whole)
    if (group.length === 1) return split(whole, level + 1)
    const mid = Math.ceil(group.length / 2)
    place(group.slice(0, mid), level)
    place(group.slice(mid), level)
  }
  /** Greedy packing of one level's pieces by the sum of their counts, each group then checked whole by `place`. */
  const pack = (pieces: readonly string[], level: number): void => {
    let group: string[] = []
    let groupTokens = 0
    for (const p of pieces) {
      const n = count(p)
      if (groupTokens + n > maxTokens && group.length > 0) {
        place(group, level)
        group = []
        groupTokens = 0
      }
      group.push(p)
      groupTokens += n
    }
    if (group.length > 0) place(group, level)
  }
  if (text !== '') pack([text], -1)
  return parts
}
