/**
 * @file Bytes to base64 for the summaries call (a file of up to 64 MiB crosses as a base64 string). Converted in
 * chunks: spreading a whole file into String.fromCharCode would exceed the engine's argument limit.
 */

/**
 * Bytes per String.fromCharCode call: far below V8's argument limit (~120k on some stacks), and a multiple of 3,
 * so every chunk but the last encodes without padding and the chunks simply concatenate.
 */
export const BASE64_CHUNK_BYTES = 3 * 8192

/** The standard (RFC 4648, padded) base64 of `bytes`. */
export function bytesToBase64(bytes: Uint8Array): string {
  const parts: string[] = []
  for (let start = 0; start < bytes.length; start += BASE64_CHUNK_BYTES) {
    const chunk = bytes.subarray(start, start + BASE64_CHUNK_BYTES)
    parts.push(btoa(String.fromCharCode(...chunk)))
  }
  return parts.join('')
}

/** A file's bytes as base64; a file that cannot be read (moved, no permission) rejects as a DocumentError. */
export async function fileToBase64(file: File): Promise<string> {
  let bytes: Uint8Array
  try {
    bytes = new Uint8Array(await file.arrayBuffer())
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e)
    throw Object.assign(new Error(`${file.name} could not be read: ${reason}`), { name: 'DocumentError' })
  }
  return bytesToBase64(bytes)
}
