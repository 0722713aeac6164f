/**
 * @file How deep JSON text nests, measured before it is parsed: JSON.parse of millions of nested brackets takes
 * seconds on the main thread, so the HTTP host (request bodies) and the conversations import (a file's text)
 * refuse deeper text with one linear scan first.
 */

const OPEN_BRACKET = 0x5b // [
const CLOSE_BRACKET = 0x5d // ]
const OPEN_BRACE = 0x7b // {
const CLOSE_BRACE = 0x7d // }
const QUOTE = 0x22 // "
const BACKSLASH = 0x5c // \

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, by one pass over the UTF-8 bytes that
 * counts brackets outside strings (multi-byte characters never contain these ASCII bytes). Strings are
 * skipped with indexOf (an 8 MiB string costs ~ms, not a byte loop). Malformed text is left for JSON.parse.
 */
export function jsonNestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  let depth = 0
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]
    if (b === QUOTE) {
      i = closingQuote(bytes, i + 1)
    } else if (b === OPEN_BRACKET || b === OPEN_BRACE) {
      if (++depth > maxDepth) return true
    } else if (b === CLOSE_BRACKET || b === CLOSE_BRACE) {
      depth--
    }
  }
  return false
}

/** Index of the quote that ends the string starting at `from` (one not escaped by an odd run of backslashes), or the end. */
function closingQuote(bytes: Uint8Array, from: number): number {
  for (let q = bytes.indexOf(QUOTE, from); q !== -1; q = bytes.indexOf(QUOTE, q + 1)) {
    let backslashes = 0
    while (q - 1 - backslashes >= from && bytes[q - 1 - backslashes] === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return q
  }
  return bytes.length
}
