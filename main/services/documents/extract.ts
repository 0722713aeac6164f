/**
 * @file A file's text, by type (issue #15): plain text, Markdown, CSV, JSON and source code as they are; HTML as the
 * text a browser shows (no script, style or template content, block elements on lines of their own, entities
 * decoded); PDF page by page without the running headers and footers (pdf.ts, clean.ts); Word's paragraphs (docx.ts).
 * Text types must be UTF-8: a file with NUL bytes or invalid UTF-8 is refused as binary whatever its name says.
 * Limits are checked before any work, so a 1 GB file costs a stat, not a read.
 */
import { joinPages, normalizeWhitespace } from './clean'
import { docxText } from './docx'
import { DocumentError } from './errors'
import { decodeHtmlEntities } from './html-entities'
import { pdfPages } from './pdf'
import { API_LIMITS, DOCUMENT_EXTENSIONS, type DocumentTypeName } from '../../../preload/api'

export { DocumentError } from './errors'
export { DOCUMENT_EXTENSIONS }

/** Largest file accepted (bytes): ~10,000 pages of text; a summary of more is not what this feature is for. */
export const MAX_DOCUMENT_BYTES = API_LIMITS.maxDocumentBytes

/** A kind of document (the contract's name for it). */
export type DocumentType = DocumentTypeName

/** Every document type, in the order a file name is matched against them. */
export const DOCUMENT_TYPES: readonly DocumentType[] = ['text', 'markdown', 'html', 'pdf', 'docx', 'csv', 'json', 'code']

/** A document's text and what it was read as. */
export interface ExtractedDocument {
  readonly type: DocumentType
  readonly text: string
}

/** The document type a file name says, or a DocumentError naming the types that are supported. */
export function documentTypeOf(fileName: string): DocumentType {
  const dot = fileName.lastIndexOf('.')
  const ext = dot < 0 ? '' : fileName.slice(dot + 1).toLowerCase()
  for (const type of DOCUMENT_TYPES) if (DOCUMENT_EXTENSIONS[type].includes(ext)) return type
  const known = DOCUMENT_TYPES.flatMap((t) => DOCUMENT_EXTENSIONS[t]).slice(0, 12).map((e) => `.${e}`).join(', ')
  throw new DocumentError(`${fileName}: ${ext === '' ? 'a file without an extension' : `.${ext} files`} cannot be summarized. Supported: ${known} and other text and source files.`)
}

/** Refuses a size over the limit (call with the file's size before reading it). */
export function checkDocumentSize(fileName: string, sizeBytes: number): void {
  if (sizeBytes === 0) throw new DocumentError(`${fileName} is empty: there is nothing to summarize.`)
  if (sizeBytes > MAX_DOCUMENT_BYTES) {
    throw new DocumentError(`${fileName} is ${formatSize(sizeBytes)}; files up to ${MAX_DOCUMENT_BYTES / 2 ** 20} MiB can be summarized.`)
  }
}

/**
 * The text of a file's bytes, read as its name's type (PDF and Word text normalized; other types as written);
 * `signal` stops a long PDF between pages.
 */
export async function extractDocument(fileName: string, bytes: Uint8Array, signal?: AbortSignal): Promise<ExtractedDocument> {
  const type = documentTypeOf(fileName)
  checkDocumentSize(fileName, bytes.byteLength)
  const text =
    type === 'pdf' ? joinPages(await pdfPages(fileName, bytes, signal))
    : type === 'docx' ? normalizeWhitespace(await docxText(fileName, bytes))
    : type === 'html' ? htmlVisibleText(decodeText(fileName, bytes))
    : decodeText(fileName, bytes)
  if (text.trim() === '') throw new DocumentError(`${fileName} has no text to summarize${type === 'pdf' ? ' (a scanned PDF holds images of pages, not text)' : ''}.`)
  return { type, text }
}

/** UTF-8 text without a byte-order mark; a NUL byte or an invalid sequence means the file is not text. */
function decodeText(fileName: string, bytes: Uint8Array): string {
  if (bytes.includes(0)) throw new DocumentError(`${fileName} is not a text file (it contains binary data), whatever its name says.`)
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    throw new DocumentError(`${fileName} is not UTF-8 text (it contains bytes that are not valid UTF-8); save it as UTF-8 and try again.`)
  }
}

/** Elements whose content is never shown. */
const HIDDEN_ELEMENTS = ['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object']
/** Elements that start a line of their own. */
const BLOCK_ELEMENTS = new Set(['p', 'div', 'br', 'hr', 'li', 'ul', 'ol', 'tr', 'table', 'section', 'article', 'header', 'footer', 'nav', 'aside', 'main', 'blockquote', 'pre', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'dt', 'dd', 'dl', 'figure', 'figcaption', 'form', 'fieldset', 'address', 'title', 'body', 'html'])

/**
 * The text a browser shows for an HTML document: comments, hidden elements (with their content) and tags removed,
 * block elements on their own lines, table cells separated by a tab, entities decoded, runs of spaces collapsed.
 * Not a full HTML parser; it never executes or fetches anything, and malformed markup degrades to its text.
 */
export function htmlVisibleText(html: string): string {
  let s = html.replace(/<!--[\s\S]*?(-->|$)/g, ' ')
  for (const tag of HIDDEN_ELEMENTS) s = s.replace(new RegExp(`<${tag}\\b[^>]*>[\\s\\S]*?(</${tag}\\s*>|$)`, 'gi'), ' ')
  s = s.replace(/<(\/?)([a-zA-Z][a-zA-Z0-9-]*)\b[^>]*>/g, (_, close: string, name: string) => {
    const n = name.toLowerCase()
    // a cell starts with a tab (the line's first is trimmed), so a row reads "Item<TAB>Price"
    if (n === 'td' || n === 'th') return close === '' ? '\t' : ''
    return BLOCK_ELEMENTS.has(n) ? '\n' : ''
  })
  s = s.replace(/<![^>]*>/g, ' ')
  s = decodeHtmlEntities(s)
  return s
    .split('\n')
    .map((line) => line.replace(/[ \u00a0\r]+/g, ' ').replace(/ ?\t ?/g, '\t').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim()
}

function formatSize(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`
}
