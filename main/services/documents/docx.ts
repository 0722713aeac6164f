/**
 * @file Word (.docx) text with mammoth: the document's paragraphs as plain text (no styles, images or comments),
 * one blank line between paragraphs.
 */
import { DocumentError } from './errors'

/** The plain text of the .docx `bytes` (`fileName` for messages). */
export async function docxText(fileName: string, bytes: Uint8Array): Promise<string> {
  const mammoth = await import('mammoth')
  try {
    const result = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })
    return result.value
  } catch (err) {
    throw new DocumentError(`${fileName} is not a readable Word document (${err instanceof Error ? err.message : String(err)}).`)
  }
}
