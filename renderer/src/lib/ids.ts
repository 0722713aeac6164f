/** @file Request ids for chat calls (so Stop can name the request). */

/** A fresh random id. `crypto.randomUUID` needs a secure context, which both the app and 127.0.0.1 are. */
export function newRequestId(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}
