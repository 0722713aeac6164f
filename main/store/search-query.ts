/**
 * @file Turning what the user typed into a safe FTS5 query, and cutting marked snippets out of message text.
 *
 * User text never reaches FTS5's query syntax: every word becomes a quoted string (inner quotes doubled), so
 * `AND`, `OR`, `NEAR`, `*`, `^`, `:`, parentheses and quotes are just text. The query is also bound as a
 * parameter, so nothing reaches SQL either. Each word matches as a prefix ("hel" finds "hello"), and all
 * words must occur (FTS5's implicit AND).
 *
 * Snippets are cut here, not by FTS5's snippet()/highlight(): those re-scan the message once per phrase hit,
 * so their cost grows with the square of the hits in one message (a 1M-character message with 33k hits took
 * 6.7 s, blocking every other call). Here a snippet is one linear pass over at most SNIPPET_SCAN_CHARS of the
 * text, whatever it holds. The tokenizing below mirrors TOKENIZE in migrations.ts closely enough to mark the
 * same words; where it differs (rare case folds) a word is left unmarked, never a hit lost, because FTS5
 * alone decides which messages match.
 */
import type { SnippetPart } from './types'

/** Longest query considered (UTF-16 units); longer input is cut, so a paste of a whole document stays cheap. */
export const MAX_QUERY_CHARS = 500

/** Most words used from a query; each adds a prefix scan of the index. */
export const MAX_QUERY_TERMS = 16

/** Largest `limit` search accepts. */
export const MAX_SEARCH_LIMIT = 200

/**
 * How much of a message (UTF-16 units from its start) a snippet is looked for in. It bounds the work per
 * hit (~10 ms for the SQL read and the scan together); a message whose first match lies further in shows
 * its opening words unmarked instead. Generous: 100k characters is about 40 pages of text.
 */
export const SNIPPET_SCAN_CHARS = 100_000

/** Words in a message snippet. */
export const SNIPPET_WORDS = 16

/** Words of context a snippet shows before the first matching word. */
const SNIPPET_WORDS_BEFORE = 4

/** Put where a snippet leaves text out. */
export const SNIPPET_ELLIPSIS = '…'

/**
 * Characters that make up a token: the classes TOKENIZE lists (letters, numbers, marks, private use, symbols
 * such as emoji). Everything else separates tokens.
 */
const TOKEN = /[\p{L}\p{N}\p{M}\p{Co}\p{So}]+/gu

/**
 * A word is worth sending only if it contains a character that survives the tokenizer. Combining marks
 * alone do not count: remove_diacritics strips them, so a lone "\u0301" became the empty prefix `""*`,
 * which matches every row. Other characters ("';", "--") would become empty phrases.
 */
const BASE_CHAR = /[\p{L}\p{N}\p{Co}\p{So}]/u

/** Control characters (including NUL) are dropped from queries. */
const CONTROL_CHARS = /\p{Cc}/gu

/** A parsed query: the FTS5 MATCH expression, and per query word its folded tokens (a phrase, last one a prefix). */
export interface ParsedQuery {
  readonly fts: string
  readonly phrases: readonly (readonly string[])[]
}

/** Case- and accent-folds a token the way unicode61 with remove_diacritics does (near enough, see @file). */
export function foldToken(token: string): string {
  return token.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()
}

/** The query for user input, or null when it has no searchable word (search returns []). */
export function parseQuery(input: string): ParsedQuery | null {
  const words = input
    .slice(0, MAX_QUERY_CHARS)
    .normalize('NFC')
    .replace(CONTROL_CHARS, ' ')
    .split(/\s+/u)
    .filter((w) => BASE_CHAR.test(w))
    .slice(0, MAX_QUERY_TERMS)
  if (words.length === 0) return null
  const phrases = words
    .map((w) => Array.from(w.matchAll(TOKEN), (m) => foldToken(m[0])).filter((t) => t !== ''))
    .filter((p) => p.length > 0)
  return { fts: words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(' '), phrases }
}

/** The FTS5 MATCH expression for user input, or null when it has no searchable word. */
export function toFtsQuery(input: string): string | null {
  return parseQuery(input)?.fts ?? null
}

interface Token {
  readonly start: number
  readonly end: number
  readonly folded: string
}

function toToken(m: RegExpExecArray): Token {
  return { start: m.index, end: m.index + m[0].length, folded: foldToken(m[0]) }
}

/** Tokens of the first SNIPPET_SCAN_CHARS of `text`, in order. */
function tokenize(text: string): Token[] {
  return Array.from(text.slice(0, SNIPPET_SCAN_CHARS).matchAll(TOKEN), toToken)
}

/** How many tokens from `i` on a phrase of the query covers there (0: none matches at `i`). */
function matchAt(tokens: readonly Token[], i: number, phrases: ParsedQuery['phrases']): number {
  let best = 0
  for (const phrase of phrases) {
    if (i + phrase.length > tokens.length || phrase.length <= best) continue
    const last = phrase.length - 1
    let ok = true
    for (let k = 0; k < phrase.length && ok; k++) {
      const folded = tokens[i + k].folded
      ok = k === last ? folded.startsWith(phrase[k]) : folded === phrase[k]
    }
    if (ok) best = phrase.length
  }
  return best
}

/** Parts for tokens [from, to) of `text`: the text between their ends, matching phrases marked. */
function parts(text: string, tokens: readonly Token[], from: number, to: number, phrases: ParsedQuery['phrases']): SnippetPart[] {
  const out: SnippetPart[] = []
  const push = (s: string, match: boolean): void => {
    if (s === '') return
    const last = out[out.length - 1]
    // Adjacent matches ("[hello] [world]" has a space between, but "[a][b]" does not) merge.
    if (last !== undefined && last.match === match) out[out.length - 1] = { text: last.text + s, match }
    else out.push({ text: s, match })
  }
  let at = tokens[from].start
  for (let i = from; i < to; ) {
    const n = Math.min(matchAt(tokens, i, phrases), to - i)
    if (n === 0) {
      i++
      continue
    }
    push(text.slice(at, tokens[i].start), false)
    push(text.slice(tokens[i].start, tokens[i + n - 1].end), true)
    at = tokens[i + n - 1].end
    i += n
  }
  push(text.slice(at, tokens[to - 1].end), false)
  return out
}

/**
 * An excerpt of SNIPPET_WORDS words around the first match of `query` in `text` (looked for in its first
 * SNIPPET_SCAN_CHARS only), matching words marked, SNIPPET_ELLIPSIS where text is left out. Linear in
 * min(text length, SNIPPET_SCAN_CHARS).
 */
export function snippet(text: string, query: ParsedQuery): SnippetPart[] {
  // Tokens are read only as far as needed: up to the first match and the words after it.
  const lookahead = Math.max(1, ...query.phrases.map((p) => p.length))
  const tokens: Token[] = []
  let checked = 0
  let first = -1
  for (const m of text.slice(0, SNIPPET_SCAN_CHARS).matchAll(TOKEN)) {
    tokens.push(toToken(m))
    for (; first < 0 && checked + lookahead <= tokens.length; checked++) if (matchAt(tokens, checked, query.phrases) > 0) first = checked
    if (first >= 0 && tokens.length >= first + SNIPPET_WORDS + lookahead) break
  }
  for (; first < 0 && checked < tokens.length; checked++) if (matchAt(tokens, checked, query.phrases) > 0) first = checked
  if (tokens.length === 0) return []
  // No match in the scanned part: the opening words, unmarked.
  const from = first < 0 ? 0 : Math.max(0, first - SNIPPET_WORDS_BEFORE)
  const to = Math.min(tokens.length, from + SNIPPET_WORDS)
  const out = parts(text, tokens, from, to, query.phrases)
  if (from > 0) out.unshift({ text: SNIPPET_ELLIPSIS, match: false })
  // More words follow (a scan that stopped early always read past `to`), or the text goes on past the scan.
  if (to < tokens.length || text.length > SNIPPET_SCAN_CHARS) out.push({ text: SNIPPET_ELLIPSIS, match: false })
  return mergeParts(out)
}

/** The whole of a short text (a title) with every match of `query` marked; beyond SNIPPET_SCAN_CHARS it is cut. */
export function highlight(text: string, query: ParsedQuery): SnippetPart[] {
  const tokens = tokenize(text)
  const shown = text.slice(0, SNIPPET_SCAN_CHARS)
  if (tokens.length === 0) return shown === '' ? [] : [{ text: shown, match: false }]
  const out = parts(text, tokens, 0, tokens.length, query.phrases)
  const head = text.slice(0, tokens[0].start)
  const tail = shown.slice(tokens[tokens.length - 1].end)
  return mergeParts([{ text: head, match: false }, ...out, { text: tail, match: false }])
}

/** Drops empty parts and merges neighbours of the same kind. */
function mergeParts(list: readonly SnippetPart[]): SnippetPart[] {
  const out: SnippetPart[] = []
  for (const p of list) {
    if (p.text === '') continue
    const last = out[out.length - 1]
    if (last !== undefined && last.match === p.match) out[out.length - 1] = { text: last.text + p.text, match: p.match }
    else out.push(p)
  }
  return out
}
