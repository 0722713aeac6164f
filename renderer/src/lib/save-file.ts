/**
 * @file Saving an exported conversation as a file: a download of a blob: URL through an anchor with `download`. The
 * page's Content-Security-Policy does not govern it (it restricts what the page loads, not what it saves), so it
 * needs no extra rule: the end-to-end tests download this way in browser mode under the served policy.
 */
import type { ExportFormat } from '../../../preload/api'
import { exportMediaType } from './export-files'

/** How long the blob stays available after the click starts the download (ms); revoking at once can cancel it. */
const REVOKE_AFTER_MS = 60_000

/** Offers `text` as a file download named `fileName`. */
export function saveExport(text: string, fileName: string, format: ExportFormat): void {
  const url = URL.createObjectURL(new Blob([text], { type: exportMediaType(format) }))
  const anchor = document.createElement('a')
  anchor.href = url
  anchor.download = fileName
  anchor.hidden = true
  document.body.append(anchor)
  anchor.click()
  anchor.remove()
  window.setTimeout(() => URL.revokeObjectURL(url), REVOKE_AFTER_MS)
}
