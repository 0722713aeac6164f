/**
 * @file PDF text by page, with pdf.js (Mozilla's, maintained; loaded on first use — it is large). Scripts in the
 * file are never evaluated (isEvalSupported: false, the fix for CVE-2024-4367's class of bug), fonts are not
 * loaded; only the text content of each page is read. Lines follow pdf.js's end-of-line marks.
 */
import { DocumentError } from './errors'

/** Most pages read from one file. */
export const MAX_PDF_PAGES = 10_000

/** The text of each page of the PDF `bytes` (`fileName` for messages); `signal` stops it between pages. */
export async function pdfPages(fileName: string, bytes: Uint8Array, signal?: AbortSignal): Promise<string[]> {
  const { getDocument } = await import('pdfjs-dist/legacy/build/pdf.mjs')
  // pdf.js takes ownership of (and detaches) the buffer it is given: hand it a copy, a plain Uint8Array (it refuses a Buffer)
  const task = getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, useSystemFonts: false, verbosity: 0 })
  let doc
  try {
    doc = await task.promise
  } catch (err) {
    const name = err instanceof Error ? err.name : ''
    if (name === 'PasswordException') throw new DocumentError(`${fileName} is encrypted (password-protected); open it, save a copy without a password, and try again.`)
    throw new DocumentError(`${fileName} is not a readable PDF (${err instanceof Error ? err.message : String(err)}).`)
  }
  try {
    if (doc.numPages > MAX_PDF_PAGES) throw new DocumentError(`${fileName} has ${doc.numPages} pages; up to ${MAX_PDF_PAGES} can be summarized.`)
    const pages: string[] = []
    for (let i = 1; i <= doc.numPages; i++) {
      signal?.throwIfAborted()
      const page = await doc.getPage(i)
      const content = await page.getTextContent()
      let text = ''
      for (const item of content.items) {
        if (!('str' in item)) continue
        text += item.str
        if (item.hasEOL) text += '\n'
      }
      pages.push(text)
      page.cleanup()
    }
    return pages
  } catch (err) {
    if (err instanceof DocumentError || signal?.aborted === true) throw err
    throw new DocumentError(`${fileName} is damaged: reading its pages failed (${err instanceof Error ? err.message : String(err)}).`)
  } finally {
    await doc.destroy()
  }
}
