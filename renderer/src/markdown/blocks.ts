/**
 * @file Block-level Markdown parser for model output: turns text into a small tree (headings, paragraphs,
 * fenced code, lists, quotes, tables, rules). It is forgiving by design: model text streams in token by token,
 * so an unclosed fence is still a code block and half a table is still a paragraph. Never produces HTML; the
 * renderer turns the tree into React elements, so model output cannot inject markup.
 */

/** A parsed block. Inline text stays raw here and is parsed by inline.ts at render time. */
export type Block =
  | { readonly kind: 'heading'; readonly level: number; readonly text: string }
  | { readonly kind: 'paragraph'; readonly text: string }
  | { readonly kind: 'code'; readonly lang: string; readonly code: string; readonly closed: boolean }
  | { readonly kind: 'list'; readonly ordered: boolean; readonly start: number; readonly items: readonly Block[][] }
  | { readonly kind: 'quote'; readonly blocks: readonly Block[] }
  | { readonly kind: 'table'; readonly header: readonly string[]; readonly align: readonly Align[]; readonly rows: readonly string[][] }
  | { readonly kind: 'rule' }

/** Column alignment of a table. */
export type Align = 'left' | 'center' | 'right' | null

/** Nesting depth (lists in quotes in lists…) beyond which content is kept as plain paragraphs. */
const MAX_NESTING_DEPTH = 8

/** Columns beyond this are dropped from a table (protects the layout from a runaway row). */
const MAX_TABLE_COLUMNS = 32

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/
const QUOTE = /^ {0,3}> ?(.*)$/
const LIST_ITEM = /^( {0,12})([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/
const TABLE_SEPARATOR = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/

/** Parses Markdown text into blocks. */
export function parseBlocks(text: string): Block[] {
  return parseLines(text.replace(/\r\n?/g, '\n').split('\n'), 0)
}

function parseLines(lines: readonly string[], depth: number): Block[] {
  const blocks: Block[] = []
  let i = 0
  while (i < lines.length) {
    const line = lines[i] ?? ''
    if (line.trim() === '') {
      i++
      continue
    }
    const fence = FENCE_OPEN.exec(line)
    if (fence !== null) {
      i = parseFence(lines, i, fence[1] ?? '```', fence[2] ?? '', blocks)
      continue
    }
    const heading = HEADING.exec(line)
    if (heading !== null) {
      blocks.push({ kind: 'heading', level: (heading[1] ?? '#').length, text: heading[2] ?? '' })
      i++
      continue
    }
    if (RULE.test(line)) {
      blocks.push({ kind: 'rule' })
      i++
      continue
    }
    if (depth < MAX_NESTING_DEPTH && QUOTE.test(line)) {
      const inner: string[] = []
      while (i < lines.length) {
        const m = QUOTE.exec(lines[i] ?? '')
        if (m === null) break
        inner.push(m[1] ?? '')
        i++
      }
      blocks.push({ kind: 'quote', blocks: parseLines(inner, depth + 1) })
      continue
    }
    if (depth < MAX_NESTING_DEPTH && LIST_ITEM.test(line)) {
      i = parseList(lines, i, depth, blocks)
      continue
    }
    if (isTableStart(lines, i)) {
      i = parseTable(lines, i, blocks)
      continue
    }
    i = parseParagraph(lines, i, blocks)
  }
  return blocks
}

/** A fenced code block; runs to the closing fence or, while a reply streams, to the end. */
function parseFence(lines: readonly string[], start: number, fence: string, lang: string, out: Block[]): number {
  const fenceChar = fence[0] ?? '`'
  const code: string[] = []
  let i = start + 1
  let closed = false
  while (i < lines.length) {
    const line = lines[i] ?? ''
    const trimmed = line.trim()
    if (trimmed.length >= fence.length && trimmed === fenceChar.repeat(trimmed.length)) {
      closed = true
      i++
      break
    }
    code.push(line)
    i++
  }
  out.push({ kind: 'code', lang, code: code.join('\n'), closed })
  return i
}

/** True when a line starts a block that interrupts a paragraph. */
function interruptsParagraph(line: string): boolean {
  return FENCE_OPEN.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || startsListInParagraph(line)
}

/** Only bullets and "1." interrupt a paragraph, so "in 2019. we…" wrapped onto a new line stays prose. */
function startsListInParagraph(line: string): boolean {
  const m = LIST_ITEM.exec(line)
  if (m === null || (m[3] ?? '').trim() === '') return false
  const marker = m[2] ?? ''
  return /^[-*+]$/.test(marker) || /^1[.)]$/.test(marker)
}

function parseParagraph(lines: readonly string[], start: number, out: Block[]): number {
  const text: string[] = [lines[start] ?? '']
  let i = start + 1
  while (i < lines.length) {
    const line = lines[i] ?? ''
    if (line.trim() === '' || interruptsParagraph(line) || isTableStart(lines, i)) break
    text.push(line)
    i++
  }
  out.push({ kind: 'paragraph', text: text.map((l) => l.trim()).join('\n') })
  return i
}

function indentOf(line: string): number {
  const m = /^ */.exec(line)
  return m === null ? 0 : m[0].length
}

/**
 * A list: consecutive items of one kind (bullet or ordered). An item owns the lines after it that are indented
 * past its marker, plus lazy continuation lines; its content is parsed recursively, which gives nested lists.
 */
function parseList(lines: readonly string[], start: number, depth: number, out: Block[]): number {
  const first = LIST_ITEM.exec(lines[start] ?? '')
  if (first === null) return start + 1
  const baseIndent = (first[1] ?? '').length
  const ordered = /\d/.test(first[2] ?? '')
  const startNumber = ordered ? Number.parseInt(first[2] ?? '1', 10) : 1
  const items: Block[][] = []
  let i = start
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i] ?? '')
    if (m === null || (m[1] ?? '').length !== baseIndent || /\d/.test(m[2] ?? '') !== ordered) break
    const contentIndent = baseIndent + (m[2] ?? '').length + 1
    const itemLines: string[] = [m[3] ?? '']
    i++
    while (i < lines.length) {
      const line = lines[i] ?? ''
      if (line.trim() === '') {
        // A blank line continues the item only if indented content follows it.
        const next = lines[i + 1] ?? ''
        if (next.trim() !== '' && indentOf(next) >= contentIndent) {
          itemLines.push('')
          i++
          continue
        }
        break
      }
      const indent = indentOf(line)
      if (indent >= contentIndent || (indent > baseIndent && LIST_ITEM.test(line))) {
        itemLines.push(line.slice(Math.min(indent, contentIndent)))
      } else if (LIST_ITEM.test(line) || interruptsParagraph(line)) {
        break
      } else {
        itemLines.push(line.trim()) // lazy continuation of the item's paragraph
      }
      i++
    }
    items.push(parseLines(itemLines, depth + 1))
    // Items separated by one blank line still form one list.
    if ((lines[i] ?? '').trim() === '' && i + 1 < lines.length) {
      const next = LIST_ITEM.exec(lines[i + 1] ?? '')
      if (next !== null && (next[1] ?? '').length === baseIndent && /\d/.test(next[2] ?? '') === ordered) i++
    }
  }
  out.push({ kind: 'list', ordered, start: startNumber, items })
  return i
}

function isTableStart(lines: readonly string[], i: number): boolean {
  const header = lines[i] ?? ''
  const separator = lines[i + 1]
  return header.includes('|') && separator !== undefined && separator.includes('-') && TABLE_SEPARATOR.test(separator)
}

/** Splits a table row on unescaped pipes outside code spans, dropping the optional outer pipes. */
function splitRow(line: string): string[] {
  let body = line.trim()
  if (body.startsWith('|')) body = body.slice(1)
  if (body.endsWith('|') && !body.endsWith('\\|')) body = body.slice(0, -1)
  const cells: string[] = []
  let cell = ''
  let inCode = false
  for (let k = 0; k < body.length; k++) {
    const ch = body[k] ?? ''
    if (ch === '\\' && body[k + 1] === '|') {
      cell += '|'
      k++
    } else if (ch === '`') {
      inCode = !inCode
      cell += ch
    } else if (ch === '|' && !inCode) {
      cells.push(cell.trim())
      cell = ''
    } else {
      cell += ch
    }
  }
  cells.push(cell.trim())
  return cells.slice(0, MAX_TABLE_COLUMNS)
}

function parseTable(lines: readonly string[], start: number, out: Block[]): number {
  const header = splitRow(lines[start] ?? '')
  const align: Align[] = splitRow(lines[start + 1] ?? '').map((spec) => {
    const left = spec.startsWith(':')
    const right = spec.endsWith(':')
    return left && right ? 'center' : right ? 'right' : left ? 'left' : null
  })
  const rows: string[][] = []
  let i = start + 2
  while (i < lines.length) {
    const line = lines[i] ?? ''
    if (line.trim() === '' || !line.includes('|')) break
    rows.push(splitRow(line))
    i++
  }
  out.push({ kind: 'table', header, align, rows })
  return i
}
