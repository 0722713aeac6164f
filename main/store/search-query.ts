/**
 * @file Turning what the user typed into a safe FTS5 query, and FTS5's marked-up snippets into parts.
 *
 * User text never reaches FTS5's query syntax: every word becomes a quoted string (inner quotes doubled), so
 * `AND`, `OR`, `NEAR`, `*`, `^`, `:`, parentheses and quotes are just text. The query is also bound as a
 * parameter, so nothing reaches SQL either. Each word matches as a prefix ("hel" finds "hello"), and all
 * words must occur (FTS5's implicit AND).
 */
import type { SnippetPart } from './types'

/** Longest query considered (UTF-16 units); longer input is cut, so a paste of a whole document stays cheap. */
export const MAX_QUERY_CHARS = 500

/** Most words used from a query; each adds a prefix scan of the index. */
export const MAX_QUERY_TERMS = 16

/** Largest `limit` search accepts. */
export const MAX_SEARCH_LIMIT = 200

/**
 * Marks FTS5 puts around matching words in snippets (STX/ETX control characters): they do not occur in
 * chat text, unlike `<b>` or brackets, and splitSnippet turns them into parts so the UI never parses markup.
 */
export const MATCH_START = '\u0002'
export const MATCH_END = '\u0003'

/**
 * A word is worth sending only if it contains a character the tokenizer indexes (letters, numbers,
 * marks, private use, symbols such as emoji; see TOKENIZE in migrations.ts). Others ("';", "--") would
 * become empty phrases.
 */
const INDEXED_CHAR = /[\p{L}\p{N}\p{M}\p{Co}\p{So}]/u

/** Control characters (including our snippet marks) are dropped from queries. */
const CONTROL_CHARS = /\p{Cc}/gu

/** The FTS5 MATCH expression for user input, or null when it has no searchable word (search returns []). */
export function toFtsQuery(input: string): string | null {
  const words = input
    .slice(0, MAX_QUERY_CHARS)
    .normalize('NFC')
    .replace(CONTROL_CHARS, ' ')
    .split(/\s+/u)
    .filter((w) => INDEXED_CHAR.test(w))
    .slice(0, MAX_QUERY_TERMS)
  if (words.length === 0) return null
  return words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(' ')
}

/** Splits text carrying MATCH_START/MATCH_END marks into plain and matching parts (empty parts dropped). */
export function splitSnippet(marked: string): SnippetPart[] {
  const parts: SnippetPart[] = []
  let match = false
  let text = ''
  const flush = (): void => {
    if (text.length > 0) {
      const last = parts[parts.length - 1]
      // Adjacent matches ("[hello] [world]" has a space between, but "[a][b]" does not) merge.
      if (last !== undefined && last.match === match) parts[parts.length - 1] = { text: last.text + text, match }
      else parts.push({ text, match })
    }
    text = ''
  }
  for (const ch of marked) {
    if (ch === MATCH_START || ch === MATCH_END) {
      flush()
      match = ch === MATCH_START
    } else {
      text += ch
    }
  }
  flush()
  return parts
}
