/** @file Exported conversations as files: their names and media types, and the words for what an import did. Pure, no DOM. */
import type { ExportFormat, ImportResult } from '../../../preload/api'
import { UNTITLED } from './format'

/** Each format's file extension and media type. */
const FILE_TYPES: Readonly<Record<ExportFormat, { readonly extension: string; readonly type: string }>> = {
  markdown: { extension: 'md', type: 'text/markdown;charset=utf-8' },
  json: { extension: 'json', type: 'application/json;charset=utf-8' }
}

/** Characters file systems refuse in names (Windows is the strictest), and control characters. */
const UNSAFE_NAME_CHARS = /[\u0000-\u001f\u007f<>:"/\\|?*]+/g

/** Longest file name made from a title (characters, before the extension). */
const MAX_NAME_CHARS = 100

/** A file name from a conversation's title: "Trip plans.md"; an empty or unusable title gives "Untitled chat.md". */
export function exportFileName(title: string, format: ExportFormat): string {
  const base = title.replace(UNSAFE_NAME_CHARS, ' ').replace(/\s+/g, ' ').trim().replace(/^\.+/, '').slice(0, MAX_NAME_CHARS).trim()
  return `${base === '' ? UNTITLED : base}.${FILE_TYPES[format].extension}`
}

/** The media type of a format's file. */
export function exportMediaType(format: ExportFormat): string {
  return FILE_TYPES[format].type
}

/** The name of a file holding every conversation: "tandem-conversations-2026-12-03.json" (local date). */
export function allConversationsFileName(now: Date = new Date()): string {
  const day = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`
  return `tandem-conversations-${day}.${FILE_TYPES.json.extension}`
}

/** Titles for a sentence: “A”, “B” and 2 more. */
function titleList(titles: readonly string[]): string {
  const shown = titles.slice(0, 3).map((t) => `“${t === '' ? UNTITLED : t}”`)
  const more = titles.length - shown.length
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ')
}

/** What an import did, in one sentence: "Imported 3 conversations; 1 was already here: “Trip plans”." */
export function importSummary(result: ImportResult): string {
  const imported = result.imported.length
  const duplicates = result.duplicates.length
  if (imported === 0 && duplicates === 0) return 'The file holds no conversations.'
  const done = imported === 0 ? 'No conversations were imported' : `Imported ${imported} conversation${imported === 1 ? '' : 's'}`
  if (duplicates === 0) return `${done}.`
  const were = duplicates === 1 ? '1 was' : `${duplicates} were`
  return `${done}; ${were} already here: ${titleList(result.duplicates.map((d) => d.title))}.`
}
