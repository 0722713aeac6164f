/**
 * @file Text cleaned before it is split and summarized: whitespace normalized (spaces collapsed, lines trimmed, at
 * most one blank line in a row), and for paged documents (PDF) the header and footer lines repeated on most pages
 * removed — a running title or "Page 3 of 50" would otherwise be summarized fifty times.
 */

/** A line at the top or bottom of this share of pages (or more) is a running header or footer. */
export const REPEATED_LINE_SHARE = 0.6
/** Lines at each end of a page looked at for headers and footers. */
const EDGE_LINES = 2
/** Fewest pages for which repetition means anything. */
const MIN_PAGES_FOR_HEADERS = 3

/** Whitespace normalized: no trailing spaces, runs of spaces and tabs as one space, at most one blank line in a row. */
export function normalizeWhitespace(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0\f\v]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

/** A line as compared across pages: page numbers and other digits do not make lines different. */
function lineKey(line: string): string {
  return line.trim().replace(/\d+/g, '#').toLowerCase()
}

/**
 * The pages' text joined (a blank line between pages), without the lines among each page's first and last
 * EDGE_LINES that appear there on at least REPEATED_LINE_SHARE of the pages.
 */
export function joinPages(pages: readonly string[]): string {
  const lines = pages.map((p) => normalizeWhitespace(p).split('\n'))
  const repeated = new Set<string>()
  if (pages.length >= MIN_PAGES_FOR_HEADERS) {
    const seen = new Map<string, number>()
    for (const page of lines) {
      const edges = new Set([...page.slice(0, EDGE_LINES), ...page.slice(-EDGE_LINES)].map(lineKey).filter((k) => k !== ''))
      for (const k of edges) seen.set(k, (seen.get(k) ?? 0) + 1)
    }
    for (const [k, n] of seen) if (n >= Math.ceil(pages.length * REPEATED_LINE_SHARE)) repeated.add(k)
  }
  const kept = lines.map((page) =>
    page.filter((line, i) => !((i < EDGE_LINES || i >= page.length - EDGE_LINES) && repeated.has(lineKey(line)))).join('\n')
  )
  return normalizeWhitespace(kept.filter((p) => p.trim() !== '').join('\n\n'))
}
