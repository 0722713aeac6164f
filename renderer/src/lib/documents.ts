/**
 * @file Files to summarize (issue #15), as the renderer sees them: which names the file picker offers, what a
 * document type is called, and the size check made before a file is read.
 */
import { DOCUMENT_EXTENSIONS, type DocumentTypeName } from '../../../preload/api'
import { formatBytes } from './format'
import { LIMITS } from './limits'

/** Extensions the app reads (without the dot), from the contract. */
export const SUMMARIZABLE_EXTENSIONS: readonly string[] = Object.values(DOCUMENT_EXTENSIONS).flat()

/** The file input's `accept` value: ".txt,.text,…". */
export const SUMMARIZE_ACCEPT = SUMMARIZABLE_EXTENSIONS.map((e) => `.${e}`).join(',')

/** How each document type is named in the UI. */
export const DOCUMENT_TYPE_LABELS: Readonly<Record<DocumentTypeName, string>> = {
  text: 'Text',
  markdown: 'Markdown',
  html: 'HTML',
  pdf: 'PDF',
  docx: 'Word',
  csv: 'CSV',
  json: 'JSON',
  code: 'Source code'
}

/** Why a file of `sizeBytes` cannot be summarized for its size, or null; asked before the file is read. */
export function fileSizeProblem(fileName: string, sizeBytes: number): string | null {
  if (sizeBytes <= LIMITS.maxDocumentBytes) return null
  return `${fileName} is ${formatBytes(sizeBytes)}; files up to ${LIMITS.maxDocumentBytes / 2 ** 20} MiB can be summarized.`
}

/** The user message a summary starts with (the app writes the same; shown until it arrives). */
export function summarizeRequestText(fileName: string): string {
  return `Summarize ${fileName}`
}
