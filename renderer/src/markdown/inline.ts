/**
 * @file Inline Markdown (code spans, strong, emphasis, strikethrough, links, line breaks) parsed into a tree.
 * A pragmatic subset of CommonMark for chat replies: single newlines become line breaks, unmatched delimiters
 * stay literal, and only http(s) and mailto links become links; anything else (javascript:, data:, relative
 * paths) stays text.
 */

/** A parsed inline node. */
export type Inline =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'code'; readonly text: string }
  | { readonly kind: 'strong' | 'em' | 'del'; readonly children: readonly Inline[] }
  | { readonly kind: 'link'; readonly href: string; readonly children: readonly Inline[] }
  | { readonly kind: 'break' }

/** Emphasis nested deeper than this is kept as text (guards against pathological input). */
const MAX_INLINE_DEPTH = 6

const ESCAPABLE = new Set('\\`*_{}[]()#+-.!|~<>"\''.split(''))
const BARE_URL = /^https?:\/\/[^\s<>"]+/
const SAFE_SCHEMES = new Set(['http:', 'https:', 'mailto:'])

/** The link target if it is safe to open outside the app (http, https, mailto), else null. */
export function safeHref(raw: string): string | null {
  try {
    const url = new URL(raw.trim())
    return SAFE_SCHEMES.has(url.protocol) ? url.href : null
  } catch {
    return null
  }
}

/** Parses one block's inline text. */
export function parseInline(text: string, depth = 0): Inline[] {
  const out: Inline[] = []
  let plain = ''
  // Delimiters known to have no closer after some position: later searches for them can skip the scan.
  const noCloserAfter = new Map<string, number>()
  const flush = (): void => {
    if (plain !== '') out.push({ kind: 'text', text: plain })
    plain = ''
  }
  const findCloser = (delimiter: string, from: number): number => {
    const known = noCloserAfter.get(delimiter)
    if (known !== undefined && from >= known) return -1
    const at = text.indexOf(delimiter, from)
    if (at < 0) noCloserAfter.set(delimiter, from)
    return at
  }

  let i = 0
  while (i < text.length) {
    const ch = text[i] ?? ''
    const next = text[i + 1] ?? ''

    if (ch === '\\' && ESCAPABLE.has(next)) {
      plain += next
      i += 2
      continue
    }
    if (ch === '\n') {
      flush()
      out.push({ kind: 'break' })
      i++
      continue
    }
    if (ch === '`') {
      let run = 1
      while (text[i + run] === '`') run++
      const fence = '`'.repeat(run)
      const close = findCloser(fence, i + run)
      if (close >= 0) {
        let code = text.slice(i + run, close).replace(/\n/g, ' ')
        if (code.length > 2 && code.startsWith(' ') && code.endsWith(' ')) code = code.slice(1, -1)
        flush()
        out.push({ kind: 'code', text: code })
        i = close + run
        continue
      }
      plain += fence
      i += run
      continue
    }
    const emphasis = depth < MAX_INLINE_DEPTH ? matchEmphasis(text, i, findCloser) : null
    if (emphasis !== null) {
      flush()
      out.push({ kind: emphasis.kind, children: parseInline(emphasis.inner, depth + 1) })
      i = emphasis.end
      continue
    }
    if (ch === '[') {
      const link = matchLink(text, i)
      if (link !== null) {
        flush()
        const children = parseInline(link.label, depth + 1)
        const href = safeHref(link.href)
        if (href === null) out.push(...children)
        else out.push({ kind: 'link', href, children })
        i = link.end
        continue
      }
    }
    if (ch === '<') {
      const close = text.indexOf('>', i + 1)
      const inner = close > 0 ? text.slice(i + 1, close) : ''
      const href = inner !== '' && !/\s/.test(inner) ? safeHref(inner) : null
      if (href !== null) {
        flush()
        out.push({ kind: 'link', href, children: [{ kind: 'text', text: inner }] })
        i = close + 1
        continue
      }
    }
    if ((ch === 'h' || ch === 'H') && (i === 0 || /[\s(]/.test(text[i - 1] ?? ''))) {
      const m = BARE_URL.exec(text.slice(i, i + 2048))
      if (m !== null) {
        const url = m[0].replace(/[.,;:!?)\]'"]+$/, '')
        const href = safeHref(url)
        if (href !== null) {
          flush()
          out.push({ kind: 'link', href, children: [{ kind: 'text', text: url }] })
          i += url.length
          continue
        }
      }
    }
    plain += ch
    i++
  }
  flush()
  return out
}

interface EmphasisMatch {
  readonly kind: 'strong' | 'em' | 'del'
  readonly inner: string
  readonly end: number
}

const isSpace = (c: string | undefined): boolean => c === undefined || /\s/.test(c)
const isWordChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}]/u.test(c)

/** `**strong**`, `__strong__`, `*em*`, `_em_`, `~~del~~` starting at i, or null. */
function matchEmphasis(text: string, i: number, findCloser: (d: string, from: number) => number): EmphasisMatch | null {
  const ch = text[i]
  if (ch !== '*' && ch !== '_' && ch !== '~') return null
  const double = text[i + 1] === ch
  if (ch === '~' && !double) return null
  const delimiter = double ? ch + ch : ch
  const open = i + delimiter.length
  // Opening delimiter must be followed by non-space; `_` must not sit inside a word (snake_case).
  if (isSpace(text[open])) return null
  if (ch === '_' && isWordChar(text[i - 1])) return null
  let from = open + 1
  for (let attempts = 0; attempts < 8; attempts++) {
    const close = findCloser(delimiter, from)
    if (close < 0) return null
    const before = text[close - 1]
    const after = text[close + delimiter.length]
    // A single `*` closer must not be half of `**`, and `_` closers must end a word.
    const partOfLonger = !double && (after === ch || before === ch)
    const intraword = ch === '_' && isWordChar(after)
    if (!isSpace(before) && !partOfLonger && !intraword) {
      const kind = ch === '~' ? 'del' : double ? 'strong' : 'em'
      return { kind, inner: text.slice(open, close), end: close + delimiter.length }
    }
    from = close + 1
  }
  return null
}

/** `[label](href)` at i, or null. The label may contain balanced brackets; the href no spaces. */
function matchLink(text: string, i: number): { label: string; href: string; end: number } | null {
  let depth = 0
  let k = i
  for (; k < text.length && k - i < 1000; k++) {
    const c = text[k]
    if (c === '\\') k++
    else if (c === '[') depth++
    else if (c === ']') {
      depth--
      if (depth === 0) break
    }
  }
  if (text[k] !== ']' || text[k + 1] !== '(') return null
  // The target may contain balanced parentheses (Wikipedia links), as in CommonMark.
  let close = -1
  let parens = 0
  for (let j = k + 2; j < text.length && j - k < 2048; j++) {
    const c = text[j]
    if (c === '(') parens++
    else if (c === ')') {
      if (parens === 0) {
        close = j
        break
      }
      parens--
    } else if (c === '\n') break
  }
  if (close < 0) return null
  const href = text.slice(k + 2, close).trim().split(/\s+/)[0] ?? ''
  if (href === '') return null
  return { label: text.slice(i + 1, k), href, end: close + 1 }
}
